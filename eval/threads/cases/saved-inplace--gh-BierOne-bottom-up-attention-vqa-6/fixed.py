# A bottom-up-attention VQA baseline: question and image embeddings are fused and sent to a
# classifier whose nn.Sequential has an in-place Dropout right after its ReLU.
import torch
import torch.nn as nn

torch.manual_seed(0)


class FCNet(nn.Module):
    def __init__(self, dims):
        super(FCNet, self).__init__()
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            layers.append(nn.ReLU())
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout=0.0):
        super(SimpleClassifier, self).__init__()
        self.q_net = FCNet([in_dim[0], hid_dim[0]])
        self.v_net = FCNet([in_dim[1], hid_dim[0]])
        self.main = nn.Sequential(
            nn.Linear(hid_dim[0], hid_dim[1]),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),
            nn.Linear(hid_dim[1], out_dim),
        )

    def forward(self, q_emb, v_emb):
        joint_repr = self.q_net(q_emb) * self.v_net(v_emb)
        logits = self.main(joint_repr)
        return logits


class BaseModel(nn.Module):
    def __init__(self, ntoken=50, q_dim=24, v_dim=32, num_ans=10):
        super(BaseModel, self).__init__()
        self.w_emb = nn.Embedding(ntoken, 16)
        self.q_emb = nn.GRU(16, q_dim, batch_first=True)
        self.v_att = nn.Linear(v_dim + q_dim, 1)
        self.classifier = SimpleClassifier([q_dim, v_dim], [48, 64], num_ans, dropout=0.5)

    def forward(self, v, q):
        w_emb = self.w_emb(q)
        _, hidden = self.q_emb(w_emb)
        q_emb = hidden[-1]
        q_rep = q_emb.unsqueeze(1).expand(-1, v.size(1), -1)
        att = torch.softmax(self.v_att(torch.cat([v, q_rep], dim=2)), dim=1)
        v_emb = (att * v).sum(1)
        return self.classifier(q_emb, v_emb)


model = BaseModel()
optim = torch.optim.Adamax(model.parameters(), lr=2e-3)
v = torch.randn(8, 6, 32)              # image region features
q = torch.randint(0, 50, (8, 7))       # question tokens
a = torch.rand(8, 10)                  # soft answer scores

model.train()
for epoch in range(2):
    pred = model(v, q)
    loss = nn.functional.binary_cross_entropy_with_logits(pred, a)
    loss.backward()
    optim.step()
    optim.zero_grad()
    print(epoch, loss.item())
