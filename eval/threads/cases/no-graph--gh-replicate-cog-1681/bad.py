# A Cog predictor whose predict() fine-tunes the model on the request before answering: setup()
# builds the model once, predict() runs a few optimizer steps on a reconstruction loss for the
# given input and returns the refined output. BasePredictor stands in for cog's class, a random
# tensor for the uploaded image.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasePredictor:
    def setup(self):
        pass


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.dec(self.enc(x))


class Predictor(BasePredictor):
    def setup(self):
        self.device = torch.device("cpu")  # "cuda" on the deployment
        self.model = AutoEncoder().to(self.device)

    @torch.inference_mode()
    def predict(self, image, steps=5, lr=1e-2):
        image = image.to(self.device)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        for step in range(steps):
            output = self.model(image)
            loss = F.mse_loss(output, image)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print("step", step, round(loss.item(), 5))
        self.model.eval()
        return self.model(image)


predictor = Predictor()
predictor.setup()
result = predictor.predict(torch.rand(1, 3, 32, 32))
print(tuple(result.shape))
