# A toolbox linking DNN activations to brain data: NetLoader loads a named network with its saved
# parameters and a layer-name -> index table, dnn_truncate cuts the network at a conv or fc layer,
# and dnn_activation runs the stimuli dataloader through the truncated network.
import copy
import os
import tempfile

import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
_model_dir = tempfile.TemporaryDirectory()
DNNBRAIN_MODEL_DIR = _model_dir.name


class AlexNet(nn.Module):
    """a small AlexNet-shaped network: features, avgpool, classifier with dropout"""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True))
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Dropout(), nn.Linear(16 * 4, 32), nn.ReLU(inplace=True),
                                        nn.Dropout(), nn.Linear(32, 32), nn.ReLU(inplace=True),
                                        nn.Linear(32, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


torch.save(AlexNet().state_dict(), os.path.join(DNNBRAIN_MODEL_DIR, 'alexnet_param.pth'))  # the shipped parameters


class NetLoader:
    def __init__(self, net):
        if net == 'alexnet':
            self.model = AlexNet()
            self.model.load_state_dict(torch.load(os.path.join(DNNBRAIN_MODEL_DIR, 'alexnet_param.pth')))
            self.layer2indices = {'conv1': (0, 0), 'conv2': (0, 3), 'fc1': (2, 1), 'fc2': (2, 4), 'fc3': (2, 6)}
            self.img_size = (32, 32)
        else:
            raise Exception('Network was not supported, please contact author for implementation.')


def dnn_truncate(net, indices, layer):
    if 'conv' in layer:
        actmodel = nn.Sequential(*list(list(net.children())[indices[0]].children())[:indices[1] + 1])
    elif 'fc' in layer:
        actmodel = copy.deepcopy(net)
        actmodel.classifier = nn.Sequential(*list(net.children())[-1][:indices[1] + 1])
    else:
        raise Exception("The input of layer format is not right,input just like conv5 or fc1")
    return actmodel


def dnn_activation(input, netname, layer, channel=None):
    loader = NetLoader(netname)
    actmodel = dnn_truncate(loader.model, loader.layer2indices[layer], layer)

    dnnact = []
    for picdata, target in input:
        dnnact_part = actmodel(picdata)
        dnnact.extend(dnnact_part.detach().numpy())
    dnnact = np.array(dnnact)

    if channel:
        dnnact = dnnact[:, [cl - 1 for cl in channel]]
    return dnnact


stimuli = torch.utils.data.TensorDataset(torch.rand(12, 3, 32, 32), torch.zeros(12))
picloader = torch.utils.data.DataLoader(stimuli, batch_size=4, shuffle=False)
act = dnn_activation(picloader, 'alexnet', 'fc2')
print('fc2 activation', act.shape, float(act.mean()))

# -- corpus check --
reference = dnn_truncate(NetLoader('alexnet').model, (2, 4), 'fc2').eval()
with torch.no_grad():
    expected = np.concatenate([reference(x).numpy() for x, _ in picloader])
if not np.allclose(act, expected, atol=1e-6):
    print("BUG: the activations were extracted with dropout active")
