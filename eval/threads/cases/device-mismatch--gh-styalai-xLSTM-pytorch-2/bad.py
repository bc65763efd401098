# An sLSTM block (xLSTM): the recurrent states nt/ct/ht/mt are created in __init__ from an example
# input and kept on the module between calls; the model is built on the CPU and then moved to the
# GPU with .to(device) (the meta device stands in for it).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class sLSTMblock(nn.Module):
    def __init__(self, x_example, depth, dropout=0.2):
        super().__init__()
        self.input_size = x_example.shape[2]
        self.ln = nn.LayerNorm(self.input_size)
        self.z_gate = nn.Linear(self.input_size, self.input_size)
        self.i_gate = nn.Linear(self.input_size, self.input_size)
        self.f_gate = nn.Linear(self.input_size, self.input_size)
        self.o_gate = nn.Linear(self.input_size, self.input_size)
        self.rz = nn.Linear(self.input_size, self.input_size, bias=False)
        self.ri = nn.Linear(self.input_size, self.input_size, bias=False)
        self.rf = nn.Linear(self.input_size, self.input_size, bias=False)
        self.ro = nn.Linear(self.input_size, self.input_size, bias=False)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(self.input_size, self.input_size)
        self.init_states(x_example)

    def init_states(self, x_example):
        self.nt_1 = torch.zeros(1, 1, x_example.shape[2], device=x_example.device)
        self.ct_1 = torch.zeros(1, 1, x_example.shape[2], device=x_example.device)
        self.ht_1 = torch.zeros(1, 1, x_example.shape[2], device=x_example.device)
        self.mt_1 = torch.zeros(1, 1, x_example.shape[2], device=x_example.device)

    def forward(self, x):
        x = self.ln(x)
        z = torch.tanh(self.z_gate(x) + self.rz(self.ht_1))
        i_tilda = self.i_gate(x) + self.ri(self.ht_1)
        f_tilda = self.f_gate(x) + self.rf(self.ht_1)
        o = torch.sigmoid(self.o_gate(x) + self.ro(self.ht_1))
        mt = torch.max(f_tilda + self.mt_1, i_tilda)
        i = torch.exp(i_tilda - mt)
        f = torch.exp(f_tilda + self.mt_1 - mt)
        ct = f * self.ct_1 + i * z
        nt = f * self.nt_1 + i
        ht = o * (ct / nt)
        self.ct_1 = ct.mean((0, 1), keepdim=True).detach()
        self.nt_1 = nt.mean((0, 1), keepdim=True).detach()
        self.ht_1 = ht.mean((0, 1), keepdim=True).detach()
        self.mt_1 = mt.mean((0, 1), keepdim=True).detach()
        return x + self.proj(self.drop(ht))


batch, seq, dim = 4, 10, 16
x_example = torch.zeros(batch, seq, dim)
model = sLSTMblock(x_example, depth=2).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(batch, seq, dim).to(device)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.shape, loss.device)
