# Video prediction model trained with an image and a sequence discriminator: the adversarial
# losses of D and G are computed together, D is stepped first, then G's loss is backpropagated.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
T, C, H, W = 4, 1, 8, 8


class VidModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(C, 8, 3, padding=1)
        self.gru = nn.GRUCell(8 * H * W, 32)
        self.decoder = nn.Linear(32, C * H * W)

    def compute_all_losses(self, batch_dict):
        observed = batch_dict["observed_data"]
        b = observed.size(0)
        h = torch.zeros(b, 32)
        for t in range(T):
            h = self.gru(torch.relu(self.encoder(observed[:, t])).flatten(1), h)
        preds = []
        for t in range(T):
            preds.append(torch.sigmoid(self.decoder(h)).view(b, C, H, W))
            h = self.gru(torch.relu(self.encoder(preds[-1])).flatten(1), h)
        pred_y = torch.stack(preds, dim=1)
        loss = torch.mean((pred_y - batch_dict["data_to_predict"]) ** 2)
        return {"loss": loss, "pred_y": pred_y}


class Discriminator(nn.Module):
    def __init__(self, in_ch):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(in_ch, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 3, padding=1))
        self.criterion = nn.MSELoss()

    def _inputs(self, x, input_real):
        if input_real is None:  # image discriminator: every frame on its own
            return x.flatten(0, 1)
        return torch.cat([input_real, x], dim=1).flatten(1, 2)  # sequence discriminator

    def netD_adv_loss(self, real, fake, input_real):
        pred_real = self.net(self._inputs(real, input_real))
        pred_fake = self.net(self._inputs(fake.detach(), input_real))
        return self.criterion(pred_real, torch.ones_like(pred_real)) + self.criterion(pred_fake, torch.zeros_like(pred_fake))

    def netG_adv_loss(self, fake, input_real):
        pred_fake = self.net(self._inputs(fake, input_real))
        return self.criterion(pred_fake, torch.ones_like(pred_fake))


def create_netD():
    netD_img = Discriminator(C)
    netD_seq = Discriminator(2 * T * C)
    params = list(netD_img.parameters()) + list(netD_seq.parameters())
    return netD_img, netD_seq, optim.Adam(params, lr=1e-4, betas=(0.5, 0.9))


def train(netG, batches, lamb_adv=0.003):
    optimizer_netG = optim.Adamax(netG.parameters(), lr=1e-3)
    netD_img, netD_seq, optimizer_netD = create_netD()
    for total_step, batch_dict in enumerate(batches):
        res = netG.compute_all_losses(batch_dict)
        loss_netG = res["loss"]

        # Compute Adversarial Loss
        real = batch_dict["data_to_predict"]
        fake = res["pred_y"]
        input_real = batch_dict["observed_data"]

        loss_netD = lamb_adv * netD_seq.netD_adv_loss(real, fake, input_real)
        loss_netD += lamb_adv * netD_img.netD_adv_loss(real, fake, None)

        loss_adv_netG = lamb_adv * netD_seq.netG_adv_loss(fake, input_real)
        loss_adv_netG += lamb_adv * netD_img.netG_adv_loss(fake, None)
        loss_netG += loss_adv_netG

        # Train G
        optimizer_netG.zero_grad()
        loss_netG.backward()
        optimizer_netG.step()

        # Train D
        optimizer_netD.zero_grad()
        loss_netD.backward()
        optimizer_netD.step()
        print(f"Iterations [{total_step + 1}] Mse [{res['loss'].item():.4f}] Adv_G [{loss_adv_netG.item():.4f}] Adv_D [{loss_netD.item():.4f}]")


batches = [{"observed_data": torch.rand(2, T, C, H, W), "data_to_predict": torch.rand(2, T, C, H, W)} for _ in range(3)]
train(VidModel(), batches)
