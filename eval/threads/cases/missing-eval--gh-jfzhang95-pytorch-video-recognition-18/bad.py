# C3D action recognition, inference.py: a trained C3D (3D convs, two dropout-regularized fully
# connected layers) labels a video with a sliding window of 16 center-cropped frames.
import copy

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class C3D(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 8, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool1 = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))
        self.conv2 = nn.Conv3d(8, 16, kernel_size=(3, 3, 3), padding=(1, 1, 1))
        self.pool2 = nn.MaxPool3d(kernel_size=(4, 4, 4), stride=(4, 4, 4))
        self.fc6 = nn.Linear(16 * 4 * 2 * 2, 64)
        self.fc7 = nn.Linear(64, 64)
        self.fc8 = nn.Linear(64, num_classes)
        self.dropout = nn.Dropout(p=0.5)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.pool1(self.relu(self.conv1(x)))
        x = self.pool2(self.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        x = self.dropout(self.relu(self.fc6(x)))
        x = self.dropout(self.relu(self.fc7(x)))
        return self.fc8(x)


def center_crop(frame):
    return np.array(frame[2:18, 2:18, :]).astype(np.float32)


def main(checkpoint, video):
    class_names = ["ApplyEyeMakeup", "Biking", "Diving", "Fencing", "Rowing"]
    model = C3D(num_classes=len(class_names))
    model.load_state_dict(checkpoint['state_dict'])
    model.train()
    clip, results = [], []
    for frame in video:
        tmp = center_crop(frame)
        tmp -= np.array([[[90.0, 98.0, 102.0]]], dtype=np.float32)
        clip.append(tmp)
        if len(clip) == 16:
            inputs = np.expand_dims(np.array(clip).astype(np.float32), axis=0)
            inputs = torch.from_numpy(np.transpose(inputs, (0, 4, 1, 2, 3)))
            outputs = model.forward(inputs)
            probs = torch.nn.Softmax(dim=1)(outputs)
            label = torch.max(probs, 1)[1].detach().cpu().numpy()[0]
            print(class_names[label], "prob: %.4f" % probs[0][label])
            results.append((inputs, outputs.detach()))
            clip.pop(0)
    return results


checkpoint = {'state_dict': C3D(num_classes=5).state_dict()}
video = [np.random.RandomState(i).rand(20, 20, 3).astype(np.float32) * 255 for i in range(18)]
results = main(checkpoint, video)

# -- corpus check --
reference = C3D(num_classes=5)
reference.load_state_dict(checkpoint['state_dict'])
reference.eval()
with torch.no_grad():
    if any(not torch.allclose(out, reference(inp), atol=1e-5) for inp, out in results):
        print("BUG: inference ran with the model in training mode (dropout active)")
