# A deep learning library's Learner (0.7 era): fit() trains the model, predict_with_targs() runs the
# validation loader through the model, and predict_array() gives the model's output for one numpy batch.
# ConvLearner wraps a pretrained backbone with a new head (batch norm + dropout) and a precompute flag.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a)).float()


def V(x, requires_grad=False):
    return x.requires_grad_(requires_grad)


def to_np(v):
    if isinstance(v, torch.Tensor):
        v = v.data
    return v.cpu().numpy()


def predict_with_targs(m, dl):
    m.eval()
    preds, targs = zip(*[(m(V(x)).data, y) for x, y in dl])
    return to_np(torch.cat(preds)), to_np(torch.cat(targs))


class ModelData:
    def __init__(self, trn_dl, val_dl):
        self.trn_dl, self.val_dl = trn_dl, val_dl


class Learner:
    def __init__(self, data, model):
        self.data, self.model = data, model
        self.crit = F.nll_loss
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)

    def fit(self, n_cycle):
        for epoch in range(n_cycle):
            self.model.train()
            for x, y in self.data.trn_dl:
                loss = self.crit(self.model(V(x)), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            val_preds, val_targs = predict_with_targs(self.model, self.data.val_dl)
            print(epoch, 'trn_loss', round(loss.item(), 4), 'val_acc', float((val_preds.argmax(1) == val_targs).mean()))
            self.model.train()

    def predict(self, is_test=False):
        return predict_with_targs(self.model, self.data.val_dl)[0]

    def predict_array(self, arr):
        return to_np(self.model(V(T(arr))))


class ConvLearner(Learner):
    def __init__(self, data, backbone, num_classes, ps=0.5, precompute=True):
        head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(ps),
                             nn.Linear(16, num_classes), nn.LogSoftmax(dim=-1))
        super().__init__(data, nn.Sequential(backbone, head))
        self.precompute = precompute

    @classmethod
    def pretrained(cls, f, data, ps=0.5, precompute=True):
        return cls(data, f(), num_classes=2, ps=ps, precompute=precompute)

    def predict_array(self, arr):
        precompute = self.precompute
        self.precompute = False
        pred = super().predict_array(arr)
        self.precompute = precompute
        return pred


def resnet_stub():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())


def batches(n, bs):
    out = []
    for _ in range(n):
        x = torch.rand(bs, 3, 16, 16)
        y = (x[:, 0].mean((1, 2)) > 0.5).long()
        out.append((x, y))
    return out


data = ModelData(batches(6, 16), batches(2, 16))
learn = ConvLearner.pretrained(resnet_stub, data, ps=0.5, precompute=True)
learn.fit(2)

im = np.random.RandomState(0).rand(3, 16, 16).astype(np.float32)  # the transformed test picture
log_preds = learn.predict_array(im[None])
probs = np.exp(log_preds)
print('probabilities', probs)

# -- corpus check --
learn.model.eval()
with torch.no_grad():
    expected = np.exp(learn.model(T(im[None])).numpy())
if not np.allclose(probs, expected, atol=1e-5):
    print("BUG: predict_array ran the model in training mode (dropout, batch statistics)")
