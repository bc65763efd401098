# GenB (VQA debiasing): besides the main VQA model, a bias model "genb" is trained as a generator
# against a discriminator that tells its answer distributions from the ground truth; each batch
# updates the main model, then genb, then the discriminator.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_ans, v_dim, q_dim = 10, 16, 12


class VQAModel(nn.Module):
    def __init__(self, gen=False):
        super().__init__()
        self.v_proj = nn.Linear(v_dim, 32)
        self.q_proj = nn.Linear(q_dim, 32)
        self.classifier = nn.Sequential(nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, num_ans))
        self.gen = gen

    def forward(self, v, q, gen=False):
        joint = self.v_proj(v) * self.q_proj(q)
        if gen:
            joint = joint + torch.randn_like(joint)
        return self.classifier(joint)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_ans, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, a):
        return self.net(torch.sigmoid(a))


model, genb, discriminator = VQAModel(), VQAModel(gen=True), Discriminator()
optim = torch.optim.Adamax(model.parameters(), lr=2e-3)
optim_G = torch.optim.Adamax(genb.parameters(), lr=2e-3)
optim_D = torch.optim.Adamax(discriminator.parameters(), lr=2e-3)

for i in range(3):
    v, q = torch.randn(8, v_dim), torch.randn(8, q_dim)
    a = torch.zeros(8, num_ans).scatter_(1, torch.randint(0, num_ans, (8, 1)), 1.0)

    optim.zero_grad()
    pred = model(v, q)
    loss = F.binary_cross_entropy_with_logits(pred, a)
    loss.backward()
    optim.step()

    # train genb
    optim_G.zero_grad()
    pred_g = genb(v, q, gen=True)
    g_loss = F.binary_cross_entropy_with_logits(pred_g, a)
    vae_preds = discriminator(pred_g)
    g_loss = g_loss + F.binary_cross_entropy_with_logits(vae_preds, torch.ones_like(vae_preds))
    g_loss.backward(retain_graph=True)

    # train the discriminator
    optim_D.zero_grad()
    dsc_loss = F.binary_cross_entropy_with_logits(discriminator(a), torch.ones(8, 1)) \
        + F.binary_cross_entropy_with_logits(discriminator(pred_g), torch.zeros(8, 1))
    dsc_loss.backward()
    optim_G.step()
    optim_D.step()
    print(i, loss.item(), g_loss.item(), dsc_loss.item())
