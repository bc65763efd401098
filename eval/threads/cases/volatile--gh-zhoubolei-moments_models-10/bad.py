# Moments in Time: test_model.py loads a pretrained ResNet-style action classifier, runs it on the
# frames of one video and prints the top-5 predicted actions.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
categories = ["bathing", "biting", "cooking", "dancing", "eating", "flying", "jumping", "running"]


def load_model(num_classes=len(categories)):
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, num_classes))
    model.eval()
    return model


def load_frames(num_frames=8):
    return torch.rand(num_frames, 3, 64, 64)


model = load_model()
frames = load_frames()
input_var = Variable(frames, volatile=True)
logit = model(input_var)
h_x = F.softmax(logit, 1).mean(dim=0)
probs, idx = h_x.sort(0, True)
print('RESULT ON video')
for i in range(0, 5):
    print('{:.3f} -> {}'.format(probs[i], categories[idx[i]]))
