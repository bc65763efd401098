# monodepth2-style Trainer: a depth encoder/decoder pair, process_batch() returns the outputs and
# a dict of losses, run_epoch() trains and calls val() every few steps. The reporter changed val()
# so that it also takes an optimisation step on the validation batch, inside the block that
# monodepth2 wraps in torch.no_grad(). Random frames stand in for KITTI.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResnetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


class DepthDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, features):
        disp = torch.sigmoid(self.conv(features))
        return {("disp", 0): F.interpolate(disp, scale_factor=2, mode="bilinear", align_corners=False)}


class Trainer:
    def __init__(self, train_batches, val_batches):
        self.models = {"encoder": ResnetEncoder(), "depth": DepthDecoder()}
        self.parameters_to_train = []
        for model in self.models.values():
            self.parameters_to_train += list(model.parameters())
        self.model_optimizer = torch.optim.Adam(self.parameters_to_train, 1e-4)
        self.train_batches = train_batches
        self.val_iter = iter(val_batches)
        self.step = 0

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs[("color", 0)])
        outputs = self.models["depth"](features)
        losses = self.compute_losses(inputs, outputs)
        return outputs, losses

    def compute_losses(self, inputs, outputs):
        disp = outputs[("disp", 0)]
        target = inputs[("color", 0)].mean(1, keepdim=True)
        smooth = (disp[:, :, :, 1:] - disp[:, :, :, :-1]).abs().mean()
        return {"loss": F.l1_loss(disp, target) + 1e-3 * smooth}

    def run_epoch(self):
        self.set_train()
        for inputs in self.train_batches:
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            if self.step % 2 == 0:
                self.val()
            self.step += 1

    def val(self):
        """Validate the model on a single minibatch, then adapt to it"""
        self.set_eval()
        inputs = next(self.val_iter)
        with torch.no_grad():
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            print("val loss", round(losses["loss"].item(), 4))
        self.set_train()


def batches(n):
    return [{("color", 0): torch.rand(2, 3, 16, 16)} for _ in range(n)]


trainer = Trainer(batches(4), batches(4))
trainer.run_epoch()
