# A CTR-prediction library (DeepCTR-Torch 0.2 style): BaseModel keeps a list of weights to
# L2-regularize, filled by add_regularization_weight from the model constructors, and adds
# their norms to the loss in every training step of fit().
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

SPARSE_FEATURES = {"C1": 10, "C2": 6, "C3": 8}   # name -> vocabulary size
EMBEDDING_DIM = 4


class Linear(nn.Module):
    def __init__(self, init_std=0.0001):
        super(Linear, self).__init__()
        self.embedding_dict = nn.ModuleDict({feat: nn.Embedding(vocab, 1) for feat, vocab in SPARSE_FEATURES.items()})
        for tensor in self.embedding_dict.values():
            nn.init.normal_(tensor.weight, mean=0, std=init_std)

    def forward(self, X):
        logits = [self.embedding_dict[feat](X[:, i]) for i, feat in enumerate(SPARSE_FEATURES)]
        return torch.cat(logits, dim=-1).sum(dim=-1, keepdim=True)


class BaseModel(nn.Module):
    def __init__(self, l2_reg_linear=1e-5, l2_reg_embedding=1e-5, init_std=0.0001, seed=1024, device='cpu'):
        super(BaseModel, self).__init__()
        torch.manual_seed(seed)
        self.device = device
        self.aux_loss = torch.zeros((1,), device=device)
        self.embedding_dict = nn.ModuleDict(
            {feat: nn.Embedding(vocab, EMBEDDING_DIM) for feat, vocab in SPARSE_FEATURES.items()})
        for tensor in self.embedding_dict.values():
            nn.init.normal_(tensor.weight, mean=0, std=init_std)
        self.linear_model = Linear(init_std)

        self.regularization_weight = []
        self.add_regularization_weight(self.embedding_dict.parameters(), l2_reg_embedding)
        self.add_regularization_weight(self.linear_model.parameters(), l2_reg_linear)

    def add_regularization_weight(self, weight_list, weight_decay, p=2):
        self.regularization_weight.append((list(weight_list), weight_decay, p))

    def get_regularization_loss(self, ):
        total_reg_loss = torch.zeros((1,), device=self.device)
        for weight_list, weight_decay, p in self.regularization_weight:
            weight_reg_loss = torch.zeros((1,), device=self.device)
            for w in weight_list:
                if isinstance(w, tuple):
                    l2_reg = torch.norm(w[1], p=p, )
                else:
                    l2_reg = torch.norm(w, p=p, )
                weight_reg_loss = weight_reg_loss + l2_reg
            reg_loss = weight_decay * weight_reg_loss
            total_reg_loss += reg_loss
        return total_reg_loss

    def compile(self, optimizer, loss=None):
        self.optim = torch.optim.Adam(self.parameters(), lr=0.001) if optimizer == "adam" else optimizer
        self.loss_func = F.binary_cross_entropy

    def fit(self, x, y, batch_size=32, epochs=1):
        train_loader = DataLoader(TensorDataset(x, y), shuffle=True, batch_size=batch_size)
        model = self.train()
        for epoch in range(epochs):
            total_loss_epoch = 0
            for x_train, y_train in train_loader:
                y_pred = model(x_train).squeeze()
                self.optim.zero_grad()
                loss = self.loss_func(y_pred, y_train.squeeze(), reduction='sum')
                reg_loss = self.get_regularization_loss()
                total_loss = loss + reg_loss + self.aux_loss
                total_loss_epoch += total_loss.item()
                total_loss.backward()
                self.optim.step()
            print("Epoch {0} - loss: {1:.4f}".format(epoch + 1, total_loss_epoch / len(x)))


class DeepFM(BaseModel):
    def __init__(self, dnn_hidden_units=(32, 16), l2_reg_dnn=1e-4, **kwargs):
        super(DeepFM, self).__init__(**kwargs)
        input_dim = EMBEDDING_DIM * len(SPARSE_FEATURES)
        layers, dims = [], (input_dim,) + tuple(dnn_hidden_units)
        for i in range(len(dnn_hidden_units)):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU()]
        self.dnn = nn.Sequential(*layers)
        self.dnn_linear = nn.Linear(dnn_hidden_units[-1], 1, bias=False)

        self.add_regularization_weight(
            filter(lambda x: 'weight' in x[0] and 'bn' not in x[0], self.dnn.named_parameters()), l2_reg_dnn)
        self.add_regularization_weight(self.dnn_linear.weight, l2_reg_dnn)

    def forward(self, X):
        sparse_embedding_list = [self.embedding_dict[feat](X[:, i]).unsqueeze(1) for i, feat in enumerate(SPARSE_FEATURES)]
        logit = self.linear_model(X)
        fm_input = torch.cat(sparse_embedding_list, dim=1)                    # B, F, E
        square_of_sum = torch.pow(torch.sum(fm_input, dim=1, keepdim=True), 2)
        sum_of_square = torch.sum(fm_input * fm_input, dim=1, keepdim=True)
        logit = logit + 0.5 * torch.sum(square_of_sum - sum_of_square, dim=2)
        dnn_logit = self.dnn_linear(self.dnn(torch.flatten(fm_input, start_dim=1)))
        return torch.sigmoid(logit + dnn_logit)


X = torch.stack([torch.randint(0, vocab, (256,)) for vocab in SPARSE_FEATURES.values()], dim=1)
y = (torch.rand(256) > 0.7).float()

model = DeepFM()
model.compile("adam")
model.fit(X, y, batch_size=64, epochs=2)
