# Face attribute classification (CelebA, 40 binary attributes): a ResNet backbone run layer by layer,
# dropout and one linear head; test.py loads the best checkpoint, switches to eval mode and prints
# the sigmoid probability of every attribute for one image. A small backbone with the ResNet layout
# and a random image stand in for resnet50 and the photo.
import json
from argparse import Namespace

import torch
import torch.nn as nn

torch.manual_seed(0)


def make_layer(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = make_layer(8, 8)
        self.layer2 = make_layer(8, 16)
        self.layer3 = make_layer(16, 32)
        self.layer4 = make_layer(32, 64)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))


class AttClsModel(nn.Module):
    def __init__(self, opt, device):
        super(AttClsModel, self).__init__()
        self.backbone = TinyResNet()
        hidden_size = 64
        self.lambdas = torch.ones((40,), device=device)
        self.fc = nn.Linear(hidden_size, 40)

    def backbone_forward(self, x):
        x = self.backbone.conv1(x)
        x = self.backbone.bn1(x)
        x = self.backbone.relu(x)
        x = self.backbone.maxpool(x)
        x = self.backbone.layer1(x)
        x = self.backbone.layer2(x)
        x = self.backbone.layer3(x)
        x = self.backbone.layer4(x)
        x = self.backbone.avgpool(x)
        return x

    def forward(self, input, labels=None):
        x = self.backbone_forward(input)
        x = torch.flatten(x, 1)
        x = nn.Dropout(0.5)(x)
        x = self.fc(x)
        if labels is None:
            return x
        cls_loss = nn.BCEWithLogitsLoss(reduction='none')(input=x, target=labels)
        cls_loss = torch.sum(cls_loss * self.lambdas.unsqueeze(0), dim=1)
        return torch.mean(cls_loss)


def main():
    args = Namespace(model_type='resnet50', img_size=64)
    img = torch.rand(3, args.img_size, args.img_size) * 2 - 1
    att_map = ['att_%d' % i for i in range(40)]

    device = torch.device("cpu")
    model = AttClsModel(args, device=device)
    model.to(device)
    model.load_state_dict(AttClsModel(args, device=device).state_dict())  # stands for torch_init_model(best_model.pth)

    # testing
    model.eval()
    att_preds = {}
    with torch.no_grad():
        logits = model(img.to(device).unsqueeze(0))
        sigmoid_probs = torch.sigmoid(logits)[0]
        sigmoid_probs = sigmoid_probs.detach().cpu().numpy()

    for j in range(len(att_map)):
        att_preds[att_map[j]] = float(sigmoid_probs[j])
    print(json.dumps(dict(list(att_preds.items())[:3]), indent=2))
    return model, img


if __name__ == '__main__':
    model, img = main()

    # -- corpus check --
    with torch.no_grad():
        again = [torch.sigmoid(model(img.unsqueeze(0))) for _ in range(3)]
    if not all(torch.equal(again[0], a) for a in again[1:]):
        print("BUG: the prediction changes from call to call: dropout is active after model.eval()")
