# Contrastive Predictive Coding on 1-D sequences: a `Model` wrapper class (not an nn.Module) holds
# the CPC network (a Conv1d encoder, a 2-layer GRU, one Linear per predicted time step), moves it
# to options["device"], and its fit()/validate() make the GRU's initial hidden state for every
# batch. The device is the GPU in the project (the meta device stands in for it here); random
# sequences stand in for the data loader.
import copy

import torch as th
from torch import nn
import torch.nn.functional as F

th.manual_seed(0)


class CPCEncoder(nn.Module):
    def __init__(self, options):
        super(CPCEncoder, self).__init__()
        self.layers = nn.ModuleList()
        self.options = copy.deepcopy(options)
        dims = options["conv_dims"]
        for layer_dims in dims[:-1]:
            i, o, k, s, p, d = layer_dims
            self.layers.append(nn.Conv1d(i, o, k, stride=s, padding=p, dilation=d))
            self.layers.append(nn.LeakyReLU(inplace=False))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class CPC(nn.Module):
    def __init__(self, options):
        super(CPC, self).__init__()
        self.options = options
        self.dims = options["conv_dims"]
        self.ts, self.bs = options["time_steps"], options["batch_size"]
        self.hindex = int(self.options["sequence_length"] / self.options["downsampling_factor"]) - self.ts
        self.encoder = CPCEncoder(options)
        self.gru = nn.GRU(input_size=self.dims[-1], hidden_size=self.dims[-1], num_layers=2, batch_first=True)
        self.wk = nn.ModuleList([nn.Linear(self.dims[-1], self.dims[-1]) for i in range(options["time_steps"])])

    def forward(self, x, hidden):
        time_sample = int(th.randint(low=0, high=self.hindex, size=(1,)))
        z = self.encoder(x).transpose(1, 2)
        encoder_samples = th.stack([z[:, time_sample + k, :] for k in range(1, self.ts + 1)])
        prior_sequence = z[:, :time_sample + 1, :]
        output, hidden = self.gru(prior_sequence, hidden)
        ct = output[:, time_sample, :].view(self.bs, -1)
        predictions = th.stack([self.wk[k](ct) for k in range(self.ts)])
        return encoder_samples, predictions, hidden


def cpc_loss(encoder_samples, predictions, options):
    nce = 0
    for k in range(options["time_steps"]):
        total = th.mm(encoder_samples[k], predictions[k].t())
        nce = nce + th.sum(th.diag(F.log_softmax(total, dim=1)))
    return nce / (-1.0 * options["batch_size"] * options["time_steps"]), 0.0


class Model:
    def __init__(self, options):
        self.options = options
        self.device = options["device"]
        self.set_cpc()

    def set_cpc(self):
        self.cpc = CPC(self.options)
        self.cpc.to(self.device)
        self.cpc_loss = cpc_loss
        self.optimizer_cpc = th.optim.Adam(self.cpc.parameters(), lr=self.options["learning_rate"])

    def fit(self, train_loader, Xval):
        self.bloss, self.vloss = [], []
        self.cpc.train()
        bs = self.options["batch_size"]
        for epoch in range(self.options["epochs"]):
            for i, Xbatch in enumerate(train_loader):
                Xbatch = self.process_batch(Xbatch)
                # Initialize hidden units for GRU i.e. all zeros with shape (S, batch size, hidden unit size)
                hidden = th.zeros(2, bs, self.options["conv_dims"][-1])
                encoder_samples, predictions, hidden = self.cpc(Xbatch, hidden)
                cpc_loss, accuracy = self.cpc_loss(encoder_samples, predictions, self.options)
                self.bloss.append(cpc_loss.item() if cpc_loss.device.type != "meta" else 0.0)
                self.optimizer_cpc.zero_grad()
                cpc_loss.backward()
                self.optimizer_cpc.step()
            self.validate(self.process_batch(Xval))

    def process_batch(self, Xbatch):
        Xbatch = Xbatch.float().unsqueeze(1)
        Xbatch = Xbatch.to(self.device)
        return Xbatch

    def validate(self, Xval):
        with th.no_grad():
            self.cpc.eval()
            hidden = th.zeros(2, self.options["batch_size"], self.options["conv_dims"][-1])
            encoder_samples, predictions, hidden = self.cpc(Xval, hidden)
            cpc_vloss, _ = cpc_loss(encoder_samples, predictions, self.options)
            self.vloss.append(cpc_vloss.item() if cpc_vloss.device.type != "meta" else 0.0)
            self.cpc.train()


options = {"device": th.device("meta"),  # th.device('cuda' if th.cuda.is_available() else 'cpu')
           "conv_dims": [[1, 16, 4, 2, 1, 1], [16, 32, 4, 2, 1, 1], 32], "time_steps": 3, "batch_size": 8,
           "sequence_length": 64, "downsampling_factor": 4, "learning_rate": 1e-3, "epochs": 2}
train_loader = [th.randn(8, 64) for _ in range(3)]
model = Model(options)
model.fit(train_loader, th.randn(8, 64))
print("trained", len(model.bloss), "batches")
