# Facial action unit detection demo (AUNets): one binary classifier per action unit, a VGG-style
# network whose classifier head has Dropout(0.5) layers; the Solver's DEMO mode restores each
# AU model and prints the probability that the AU is active in each face image.
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class AUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(True), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Linear(32 * 8 * 8, 64), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(64, 64), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(64, 1))

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class Solver:
    def __init__(self, aus):
        self.aus = aus
        self.checkpoints = {au: AUNet().state_dict() for au in aus}  # stands in for the .pth files

    def build_model(self, au):
        self.C = AUNet()
        self.C.load_state_dict(self.checkpoints[au])
        self.C.eval()

    def DEMO(self, images):
        results = {}
        for au in self.aus:
            self.build_model(au)
            with torch.no_grad():
                results[au] = torch.sigmoid(self.C(images)).squeeze(1)
        return results


solver = Solver(aus=[1, 2, 4, 6])
faces = torch.rand(5, 3, 32, 32)
results = solver.DEMO(faces)
for au, probs in results.items():
    print("AU%02d" % au, [round(p, 3) for p in probs.tolist()])

# -- corpus check --
reference = copy.deepcopy(solver.C).eval()
with torch.no_grad():
    expected = torch.sigmoid(reference(faces)).squeeze(1)
if not torch.allclose(results[solver.aus[-1]], expected, atol=1e-6):
    print("BUG: the demo predicted with the Dropout layers in training mode")
