# deepinv-style Gradient Step denoiser: GSPnP wraps a DRUNet-like denoiser N and denoises with
# x - grad g(x), where g(x) = 0.5 ||x - N(x)||^2 and its gradient needs autograd through N.
# potential_grad switches autograd on globally to take that gradient and, when the module is not
# in training mode, switches it off globally afterwards. The user denoises one image with the
# model and then, in the same script, fits a small post-filter on the denoised image.
import torch
import torch.nn as nn

torch.manual_seed(0)


class StudentGrad(nn.Module):
    def __init__(self, denoiser):
        super().__init__()
        self.model = denoiser

    def forward(self, x, sigma):
        return self.model(x, sigma)


class GSPnP(nn.Module):
    def __init__(self, denoiser, train=False):
        super().__init__()
        self.student_grad = StudentGrad(denoiser)
        self.train = train

    def potential(self, x, sigma):
        N = self.student_grad(x, sigma)
        return 0.5 * torch.norm(x - N) ** 2

    def potential_grad(self, x, sigma):
        with torch.enable_grad():
            x = x.float()
            x = x.requires_grad_()
            N = self.student_grad(x, sigma)
            JN = torch.autograd.grad(N, x, grad_outputs=x - N, create_graph=True, only_inputs=True)[0]
        Dg = x - N - JN
        return Dg

    def forward(self, x, sigma):
        Dg = self.potential_grad(x, sigma)
        x_hat = x - Dg
        return x_hat


class DRUNet(nn.Module):
    def __init__(self, in_channels=3, out_channels=3, nc=16):
        super().__init__()
        self.head = nn.Conv2d(in_channels + 1, nc, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(nc, nc, 3, padding=1), nn.ELU(), nn.Conv2d(nc, nc, 3, padding=1))
        self.tail = nn.Conv2d(nc, out_channels, 3, padding=1)

    def forward(self, x, sigma):
        noise_level_map = torch.full_like(x[:, :1], sigma)
        h = self.head(torch.cat((x, noise_level_map), 1))
        return self.tail(h + self.body(h))


def GSDRUNet(in_channels=3, out_channels=3, train=False):
    return GSPnP(DRUNet(in_channels, out_channels), train=train)


x = torch.tensor(12.0, requires_grad=True)
y = x ** 2 - 2
print("before the denoiser:", y.requires_grad)

img = torch.rand((1, 3, 30, 30))
model = GSDRUNet(in_channels=3, out_channels=3)
out = model(img, 0.1)

# the user's own training, later in the same script: a 3x3 post-filter fitted on the denoised image
post_filter = nn.Conv2d(3, 3, 3, padding=1)
optimizer = torch.optim.Adam(post_filter.parameters(), lr=1e-2)
target = img.detach()
for step in range(3):
    optimizer.zero_grad()
    loss = ((post_filter(out.detach()) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
