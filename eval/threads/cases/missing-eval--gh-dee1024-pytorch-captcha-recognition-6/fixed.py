# Captcha recognition: a CNN (conv + BatchNorm + Dropout blocks) reads 4-character captchas; after
# training, captcha_predict's main() loads the weights and decodes each image in the predict folder.
import copy

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
ALL_CHAR_SET = list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
ALL_CHAR_SET_LEN = len(ALL_CHAR_SET)
MAX_CAPTCHA = 4


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.BatchNorm2d(8),
                                    nn.Dropout(0.5), nn.ReLU(), nn.MaxPool2d(2))
        self.layer2 = nn.Sequential(nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16),
                                    nn.Dropout(0.5), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Sequential(nn.Linear(16 * 4 * 10, 64), nn.Dropout(0.5), nn.ReLU())
        self.rfc = nn.Sequential(nn.Linear(64, MAX_CAPTCHA * ALL_CHAR_SET_LEN))

    def forward(self, x):
        out = self.layer2(self.layer1(x))
        out = out.view(out.size(0), -1)
        return self.rfc(self.fc(out))


def train(cnn, images, labels):
    cnn.train()
    criterion = nn.MultiLabelSoftMarginLoss()
    optimizer = torch.optim.Adam(cnn.parameters(), lr=0.001)
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(cnn(images), labels)
        loss.backward()
        optimizer.step()
    return cnn.state_dict()


def main(state, pre_loader):
    cnn = CNN()
    cnn.load_state_dict(state)
    cnn.eval()
    print("load cnn net.")
    texts, outputs = [], []
    for image in pre_loader:
        predict_label = cnn(image)
        chars = []
        for i in range(MAX_CAPTCHA):
            segment = predict_label[0, i * ALL_CHAR_SET_LEN:(i + 1) * ALL_CHAR_SET_LEN]
            chars.append(ALL_CHAR_SET[np.argmax(segment.detach().numpy())])
        c = ''.join(chars)
        print(c)
        texts.append(c)
        outputs.append(predict_label.detach())
    return cnn, outputs


train_images = torch.rand(16, 1, 16, 40)
train_labels = torch.zeros(16, MAX_CAPTCHA * ALL_CHAR_SET_LEN)
train_labels[:, ::ALL_CHAR_SET_LEN] = 1.0
state = train(CNN(), train_images, train_labels)
pre_loader = [torch.rand(1, 1, 16, 40) for _ in range(3)]
cnn, outputs = main(state, pre_loader)

# -- corpus check --
reference = CNN()
reference.load_state_dict(state)
reference.eval()
with torch.no_grad():
    expected = [reference(image) for image in pre_loader]
if any(not torch.allclose(o, e, atol=1e-5) for o, e in zip(outputs, expected)):
    print("BUG: predictions were made in training mode (dropout and batch statistics active)")
