# In-domain GAN inversion: an encoder E is trained to invert a frozen generator G, with a
# discriminator D trained alongside it (real/fake loss plus an R1-style gradient penalty).
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def div_loss_(D, real_x):
    x_ = real_x.requires_grad_(True)
    y_ = D(x_)
    grad = autograd.grad(outputs=y_, inputs=x_, grad_outputs=torch.ones_like(y_),
                         create_graph=True, retain_graph=True, only_inputs=True)[0]
    div = (grad * grad).sum(dim=1, keepdim=True).sum(dim=2, keepdim=True).sum(dim=3, keepdim=True)
    return torch.mean(div)


def GAN_loss(scores_out, real=True):
    if real:
        return torch.mean(F.softplus(-scores_out))
    else:
        return torch.mean(F.softplus(scores_out))


G = nn.Sequential(nn.Linear(2 * 8, 3 * 8 * 8), nn.Tanh(), nn.Unflatten(1, (3, 8, 8))).requires_grad_(False)
E = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 2 * 8))
D = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(8 * 8 * 8, 1))
encode_dim = [2, 8]
optimizer_E = torch.optim.Adam(E.parameters(), lr=1e-4, betas=(0.9, 0.99))
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.9, 0.99))


def training_loop(train_dataloader, max_epoch=2, loss_pix_weight=1.0, loss_adv_weight=0.1, loss_gp_weight=5.0):
    for epoch in range(max_epoch):
        for step, x in enumerate(train_dataloader):
            batch_size = x.shape[0]
            z = E(x).view(batch_size, *encode_dim)
            x_rec = G(z.flatten(1))

            # optimizing D
            x_real = D(x)
            x_fake = D(x_rec.detach())
            loss_real = GAN_loss(x_real, real=True)
            loss_fake = GAN_loss(x_fake, real=False)
            loss_gp = div_loss_(D, x.clone())
            D_loss = loss_real + loss_fake + loss_gp_weight * loss_gp
            D_loss.backward()
            optimizer_D.step()

            # optimizing E
            loss_pix = torch.mean((x - x_rec) ** 2)
            loss_adv = GAN_loss(D(x_rec), real=True)
            E_loss = loss_pix_weight * loss_pix + loss_adv_weight * loss_adv
            optimizer_E.zero_grad()
            E_loss.backward()
            optimizer_E.step()
            print(f'Epoch:{epoch:03d}, Step:{step:04d}, D-[real:{loss_real.item():.3f}, fake:{loss_fake.item():.3f}], '
                  f'E-[pix:{loss_pix.item():.3f}, adv:{loss_adv.item():.3f}]')


train_dataloader = [torch.randn(4, 3, 8, 8) for _ in range(5)]
training_loop(train_dataloader)

# -- corpus check --
seen = []
optimizer_D.register_step_pre_hook(lambda opt, args, kwargs: seen.append(D[0].weight.grad.clone()))
for opt in (optimizer_D, optimizer_E):
    for group in opt.param_groups:
        group["lr"] = 0.0
for _ in range(2):
    training_loop(train_dataloader[:1], max_epoch=1)
if not torch.allclose(seen[0], seen[1]):
    print("BUG: D stepped on gradients left from earlier steps (and from E's adversarial loss): never zeroed")
