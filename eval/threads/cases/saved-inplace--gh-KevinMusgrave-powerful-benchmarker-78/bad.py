# Metric learning with a trunk, an embedder MLP and a classifier MLP ("train with classifier"):
# the MLP puts nn.ReLU(inplace=True) first, so the classifier's ReLU runs on the embeddings.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    # layer_sizes[0] is the dimension of the input
    # layer_sizes[-1] is the dimension of the output
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(num_layers):
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=True))
            layer_list.append(nn.Linear(layer_sizes[i], layer_sizes[i + 1]))
        self.net = nn.Sequential(*layer_list)

    def forward(self, x):
        return self.net(x)


def contrastive_loss(embeddings, labels, margin=0.5):
    emb = F.normalize(embeddings, dim=1)
    sim = emb @ emb.t()
    same = labels[:, None] == labels[None, :]
    pos = (1 - sim)[same].mean()
    neg = F.relu(sim - margin)[~same].mean()
    return pos + neg


class TrainWithClassifier:
    def __init__(self, models, optimizers, classifier_loss_weight=0.5):
        self.models = models
        self.optimizers = optimizers
        self.classifier_loss_weight = classifier_loss_weight

    def compute_embeddings(self, data):
        trunk_output = self.models["trunk"](data)
        return self.models["embedder"](trunk_output)

    def train_step(self, data, labels):
        for opt in self.optimizers:
            opt.zero_grad()
        embeddings = self.compute_embeddings(data)
        metric_loss = contrastive_loss(embeddings, labels)
        logits = self.models["classifier"](embeddings)
        classifier_loss = F.cross_entropy(logits, labels)
        total = metric_loss + self.classifier_loss_weight * classifier_loss
        total.backward()
        for opt in self.optimizers:
            opt.step()
        return total.item()


trunk = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
embedder = MLP([8, 32, 16])
classifier = MLP([16, 32, 5])
models = {"trunk": trunk, "embedder": embedder, "classifier": classifier}
optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models.values()]
trainer = TrainWithClassifier(models, optimizers)

data = torch.randn(10, 3, 8, 8)
labels = torch.arange(10) % 5
for it in range(2):
    print(it, trainer.train_step(data, labels))
