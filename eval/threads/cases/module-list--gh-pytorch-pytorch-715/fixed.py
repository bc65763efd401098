# SNLI classifier: premise and hypothesis are embedded, concatenated and passed through a
# configurable number of hidden layers built in a loop into a list; then a 3-way classifier.
import torch
import torch.nn as nn

torch.manual_seed(0)
options = {"n_words": 50, "dim_word": 16, "n_hid": 32, "n_layers": 2, "act": "ReLU"}


class SNLINet(nn.Module):
    def __init__(self, options):
        super().__init__()
        self.embed = nn.Embedding(options["n_words"], options["dim_word"])
        indim = 2 * options["dim_word"]
        self.hids = nn.ModuleList()
        for li in range(options["n_layers"]):
            self.hids.append(nn.ModuleList([nn.Linear(indim, options["n_hid"]), getattr(nn, options["act"])()]))
            indim = options["n_hid"]
        self.classifier = nn.Linear(options["n_hid"], 3)

    def forward(self, premise, hypothesis):
        h = torch.cat([self.embed(premise).sum(1), self.embed(hypothesis).sum(1)], dim=1)
        for linear, act in self.hids:
            h = act(linear(h))
        return self.classifier(h)


model = SNLINet(options)
first_hidden = model.hids[0][0].weight.detach().clone()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    premise = torch.randint(0, options["n_words"], (8, 6))
    hypothesis = torch.randint(0, options["n_words"], (8, 5))
    label = torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(premise, hypothesis), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(model.parameters)

# -- corpus check --
if torch.equal(first_hidden, model.hids[0][0].weight.detach()):
    print("BUG: the hidden layers were never updated (not in model.parameters())")
