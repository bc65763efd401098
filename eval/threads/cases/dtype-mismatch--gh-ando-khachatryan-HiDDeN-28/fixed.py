# HiDDeN-style watermarking: an encoder hides a bit message in a cover image, a decoder recovers it,
# and a discriminator tells cover images from encoded ones; one Hidden object owns the networks,
# the optimizers and the losses, and train_on_batch() does one step of each.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")


class EncoderDecoder(nn.Module):
    def __init__(self, message_length=8, channels=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3 + message_length, channels, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(channels, 3, 1))
        self.decoder = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, message_length))

    def forward(self, images, messages):
        expanded = messages[:, :, None, None].expand(-1, -1, images.shape[2], images.shape[3])
        encoded = self.encoder(torch.cat([images, expanded], dim=1))
        return encoded, self.decoder(encoded)


class Discriminator(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.linear = nn.Linear(channels, 1)

    def forward(self, images):
        return self.linear(self.layers(images))


class Hidden:
    def __init__(self, device):
        self.encoder_decoder = EncoderDecoder().to(device)
        self.optimizer_enc_dec = torch.optim.Adam(self.encoder_decoder.parameters())
        self.discriminator = Discriminator().to(device)
        self.optimizer_discrim = torch.optim.Adam(self.discriminator.parameters())
        self.device = device
        self.bce_with_logits_loss = nn.BCEWithLogitsLoss()
        self.mse_loss = nn.MSELoss()
        self.cover_label = 1
        self.encoded_label = 0

    def train_on_batch(self, images, messages):
        batch_size = images.shape[0]
        self.encoder_decoder.train()
        self.discriminator.train()

        self.optimizer_discrim.zero_grad()
        d_target_label_cover = torch.full((batch_size, 1), self.cover_label, device=self.device).float()
        d_loss_on_cover = self.bce_with_logits_loss(self.discriminator(images), d_target_label_cover)
        d_loss_on_cover.backward()
        encoded_images, decoded_messages = self.encoder_decoder(images, messages)
        d_target_label_encoded = torch.full((batch_size, 1), self.encoded_label, device=self.device).float()
        d_loss_on_encoded = self.bce_with_logits_loss(self.discriminator(encoded_images.detach()), d_target_label_encoded)
        d_loss_on_encoded.backward()
        self.optimizer_discrim.step()

        self.optimizer_enc_dec.zero_grad()
        g_target_label_encoded = torch.full((batch_size, 1), self.cover_label, device=self.device).float()
        g_loss_adv = self.bce_with_logits_loss(self.discriminator(encoded_images), g_target_label_encoded)
        g_loss = 0.001 * g_loss_adv + 0.7 * self.mse_loss(encoded_images, images) + self.mse_loss(decoded_messages, messages)
        g_loss.backward()
        self.optimizer_enc_dec.step()
        return {"loss": g_loss.item(), "discr_cover_bce": d_loss_on_cover.item()}


hidden = Hidden(device)
for step in range(3):
    images = torch.rand(4, 3, 16, 16, device=device) * 2 - 1
    messages = torch.randint(0, 2, (4, 8), device=device).float()
    print(step, hidden.train_on_batch(images, messages))
