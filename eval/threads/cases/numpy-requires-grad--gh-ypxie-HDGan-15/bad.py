# HDGan's training loop (HDGan/HDGan.py with proj_utils/torch_utils.py), cut down: the
# discriminator is updated on real, mismatched and generated images at each resolution, and every
# image loss is sent to a visdom plot through the to_numpy helper. Written for PyTorch 0.3
# (Variable wrappers, volatile), run here on a current PyTorch. A small generator and
# discriminator, random images and text embeddings stand in for the birds data set; plot_scalar
# keeps its values instead of sending them to a visdom server.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
device = torch.device("cpu")


def to_variable(x, requires_grad=True, var=True):

    if type(x) is Variable:
        return x
    if type(x) is np.ndarray:
        x = torch.from_numpy(x.astype(np.float32))
    if var:
        x = Variable(x, requires_grad=requires_grad)
    return x


def to_device(src, var=True, requires_grad=True):

    src = to_variable(src, var=var, requires_grad=requires_grad)
    return src.to(device)


def to_numpy(src):

    if type(src) == np.ndarray:
        return src
    elif type(src) == Variable:
        x = src.data
    else:
        x = src
    return x.cpu().numpy()


class plot_scalar(object):
    def __init__(self, name='default', env='main', rate=1):
        self.name, self.env, self.rate = name, env, rate
        self.values = []

    def plot(self, values):
        self.values.append(float(values))


class Generator(nn.Module):
    def __init__(self, emb_dim=16, noise_dim=8):
        super().__init__()
        self.fc = nn.Linear(emb_dim + noise_dim, 3 * 8 * 8)
        self.up = nn.Upsample(scale_factor=2)

    def forward(self, embeddings, z):
        x64 = torch.tanh(self.fc(torch.cat([embeddings, z], 1))).view(-1, 3, 8, 8)
        return {'output_64': x64, 'output_128': self.up(x64)}


class Discriminator(nn.Module):
    def __init__(self, emb_dim=16):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pair = nn.Linear(8 + emb_dim, 1)
        self.local = nn.Conv2d(8, 1, 1)

    def forward(self, images, embeddings):
        h = torch.relu(self.conv(images))
        pair_logit = self.pair(torch.cat([h.mean((2, 3)), embeddings], 1))
        return pair_logit, nn.functional.adaptive_avg_pool2d(self.local(h), 5)


def compute_d_pair_loss(real_logit, wrong_logit, fake_logit, real_labels, fake_labels):
    criterion = nn.MSELoss()
    return criterion(real_logit, real_labels) + (criterion(wrong_logit, fake_labels) +
                                                 criterion(fake_logit, fake_labels)) / 2.


def compute_d_img_loss(wrong_img_logit, real_img_logit, fake_img_logit, real_labels, fake_labels):
    criterion = nn.MSELoss()
    return criterion(real_img_logit, real_labels) + (criterion(wrong_img_logit, real_labels) +
                                                     criterion(fake_img_logit, fake_labels)) / 2.


netG, netD = Generator().to(device), Discriminator().to(device)
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
batch_size = 4
all_keys = ["output_64", "output_128"]
d_plot_dict = {key: plot_scalar(name="d_img_loss_" + key, env='HDGAN_birds') for key in all_keys}
d_loss_plot = plot_scalar(name="d_loss", env='HDGAN_birds')
z = to_device(torch.FloatTensor(batch_size, 8).normal_(0, 1))


def train_sampler():
    for _ in range(3):
        images = {'output_64': np.random.rand(batch_size, 3, 8, 8), 'output_128': np.random.rand(batch_size, 3, 16, 16)}
        wrong_images = {k: v[::-1].copy() for k, v in images.items()}
        yield images, wrong_images, np.random.rand(batch_size, 16)


netG.train()
netD.train()
for images, wrong_images, np_embeddings in train_sampler():
    embeddings = to_device(np_embeddings, requires_grad=False)
    z.data.normal_(0, 1)

    for p in netD.parameters():
        p.requires_grad = True
    netD.zero_grad()
    fake_images = netG(embeddings, z)

    discriminator_loss = 0
    for key, _ in fake_images.items():
        this_img = to_device(images[key])
        this_wrong = to_device(wrong_images[key])
        this_fake = Variable(fake_images[key].data)

        real_logit, real_img_logit_local = netD(this_img, embeddings)
        wrong_logit, wrong_img_logit_local = netD(this_wrong, embeddings)
        fake_logit, fake_img_logit_local = netD(this_fake, embeddings)

        real_labels, fake_labels = torch.ones_like(real_logit), torch.zeros_like(real_logit)
        pair_loss = compute_d_pair_loss(real_logit, wrong_logit, fake_logit, real_labels, fake_labels)
        real_labels, fake_labels = torch.ones_like(real_img_logit_local), torch.zeros_like(real_img_logit_local)
        img_loss = compute_d_img_loss(wrong_img_logit_local, real_img_logit_local, fake_img_logit_local,
                                      real_labels, fake_labels)

        discriminator_loss += (pair_loss + img_loss)

        d_plot_dict[key].plot(to_numpy(img_loss).mean())

    discriminator_loss.backward()
    optimizerD.step()
    netD.zero_grad()
    d_loss_val = to_numpy(discriminator_loss).mean()
    d_loss_plot.plot(d_loss_val)

print({key: len(p.values) for key, p in d_plot_dict.items()}, len(d_loss_plot.values))
