# GOTURN tracker test script: a two-stream network (shared conv features of the previous and the
# current crop, fully connected layers with dropout) regresses the box in the current frame; the
# tester loads the trained weights and tracks the object through a sequence frame by frame.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


class GoNet(nn.Module):
    def __init__(self):
        super(GoNet, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 5, stride=4), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(3))
        self.classifier = nn.Sequential(
            nn.Linear(16 * 3 * 3 * 2, 64), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(64, 64), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(64, 4))

    def forward(self, x, y):
        x1 = self.features(x).view(x.size(0), -1)
        x2 = self.features(y).view(x.size(0), -1)
        return self.classifier(torch.cat((x1, x2), 1))


class TesterOTB:
    """Tester for OTB formatted sequences"""

    def __init__(self, frames, init_bbox, state_dict):
        self.model = GoNet()
        self.model.load_state_dict(state_dict)
        self.model.eval()
        self.frames = frames
        self.len = len(frames) - 1
        self.prev_rect = np.array(init_bbox, dtype=np.float32)
        self.outputs = []

    def get_sample(self, idx):
        # crop of the previous and the current frame around the previous box, scaled to the input size
        return {'previmg': self.frames[idx], 'currimg': self.frames[idx + 1]}

    def get_rect(self, sample):
        x1, x2 = sample['previmg'][None, :, :, :], sample['currimg'][None, :, :, :]
        with torch.no_grad():
            y = self.model(x1, x2)
        self.outputs.append(y)
        bb = y.cpu().numpy()[0] * (227. / 10)
        return self.prev_rect + bb / 227.

    def test(self):
        for i in range(self.len):
            bb = self.get_rect(self.get_sample(i))
            self.prev_rect = bb
        return self.prev_rect


trained = GoNet().state_dict()  # stands for torch.load(model_path)
frames = [torch.rand(3, 64, 64) for _ in range(6)]
tester = TesterOTB(frames, [10.0, 12.0, 40.0, 44.0], trained)
print("final box", tester.test())

# -- corpus check --
reference = GoNet()
reference.load_state_dict(trained)
reference.eval()
with torch.no_grad():
    expected = [reference(frames[i][None], frames[i + 1][None]) for i in range(tester.len)]
if not all(torch.allclose(a, b) for a, b in zip(tester.outputs, expected)):
    print("BUG: the tracker ran the network in training mode (dropout active at test time)")
