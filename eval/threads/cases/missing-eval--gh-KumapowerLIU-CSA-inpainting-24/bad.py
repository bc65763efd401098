# CSA inpainting test script (test.py with the pieces of models/ it uses): create_model(opt) builds
# the CSA model, whose initialize() defines the U-Net generator and loads its trained weights when
# not training; the loop sets each masked image as input, runs model.test() and keeps the visuals.
# The generator uses BatchNorm2d and Dropout. (A few random 32x32 images stand in for Paris
# StreetView, and a short training run writes the checkpoint the test script loads.)
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class UnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf=8, use_dropout=True):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(input_nc, ngf, 4, 2, 1), nn.LeakyReLU(0.2, True),
                                  nn.Conv2d(ngf, ngf * 2, 4, 2, 1), nn.BatchNorm2d(ngf * 2))
        up = [nn.ReLU(True), nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1), nn.BatchNorm2d(ngf)]
        if use_dropout:
            up.append(nn.Dropout(0.5))
        up += [nn.ReLU(True), nn.ConvTranspose2d(ngf, output_nc, 4, 2, 1), nn.Tanh()]
        self.up = nn.Sequential(*up)

    def forward(self, x):
        return self.up(self.down(x))


def define_G(input_nc, output_nc, ngf, norm='batch', use_dropout=True):
    return UnetGenerator(input_nc, output_nc, ngf, use_dropout=use_dropout)


class BaseModel:
    def initialize(self, opt):
        self.opt = opt
        self.isTrain = opt['isTrain']
        self.save_dir = opt['checkpoints_dir']

    def load_network(self, network, network_label, epoch_label):
        save_path = os.path.join(self.save_dir, f'{epoch_label}_net_{network_label}.pth')
        network.load_state_dict(torch.load(save_path))


class CSA(BaseModel):
    def name(self):
        return 'CSAModel'

    def initialize(self, opt):
        BaseModel.initialize(self, opt)
        self.netG = define_G(4, 3, opt['ngf'], opt['norm'], not opt['no_dropout'])
        if not self.isTrain or opt['continue_train']:
            self.load_network(self.netG, 'G', opt['which_epoch'])

    def set_input(self, input, mask):
        self.input_A = input
        self.mask = mask
        self.real_A = input * (1 - mask)

    def forward(self):
        self.fake_B = self.netG(torch.cat([self.real_A, self.mask], dim=1))

    def test(self):
        with torch.no_grad():
            self.forward()

    def get_current_visuals(self):
        return {'real_A': self.real_A, 'fake_B': self.fake_B, 'real_B': self.input_A}


def create_model(opt):
    model = CSA()
    model.initialize(opt)
    print("model [%s] was created" % (model.name()))
    return model


def write_checkpoint(opt, images, mask):
    """stands in for train.py: trains the generator a few steps and saves its weights"""
    netG = define_G(4, 3, opt['ngf'])
    optimizer = torch.optim.Adam(netG.parameters(), lr=2e-3)
    for _ in range(5):
        fake = netG(torch.cat([images * (1 - mask), mask.expand(len(images), -1, -1, -1)], dim=1))
        loss = nn.functional.l1_loss(fake, images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(netG.state_dict(), os.path.join(opt['checkpoints_dir'], 'latest_net_G.pth'))


images = torch.tanh(torch.randn(6, 3, 32, 32))
mask = torch.zeros(1, 1, 32, 32)
mask[..., 8:24, 8:24] = 1
with tempfile.TemporaryDirectory() as checkpoints_dir:
    opt = {'isTrain': False, 'continue_train': False, 'checkpoints_dir': checkpoints_dir, 'which_epoch': 'latest',
           'ngf': 8, 'norm': 'batch', 'no_dropout': False}
    write_checkpoint(opt, images, mask)

    model = create_model(opt)
    results = []
    for i in range(0, len(images), 2):
        model.set_input(images[i:i + 2], mask.expand(2, -1, -1, -1))
        model.test()
        visuals = model.get_current_visuals()
        results.append(visuals['fake_B'])
        print('process image... %d' % i)

    # -- corpus check --
    reference = define_G(4, 3, 8)
    reference.load_state_dict(torch.load(os.path.join(checkpoints_dir, 'latest_net_G.pth')))
    reference.eval()
    with torch.no_grad():
        expected = reference(torch.cat([images * (1 - mask), mask.expand(6, -1, -1, -1)], dim=1))
    if not torch.allclose(torch.cat(results), expected, atol=1e-5):
        print("BUG: the generator inpainted the test images in training mode (batch statistics, dropout on)")
