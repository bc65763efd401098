# A YOLOv5-style detector loss, in the shape of the repository's utils/loss.py: ComputeLoss
# builds its targets per detection layer in build_targets() (gain holds the grid size of each
# layer, gij the integer grid cell of each target) and __call__ gathers the predictions at those
# cells. A two-layer toy head and random boxes stand in for the detector and the COCO labels.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=3, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a / torch.tensor([8.0, 16.0]).view(-1, 1, 1))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        out = []
        for i, x in enumerate(xs):
            y = self.m[i](x)
            bs, _, ny, nx = y.shape
            out.append(y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
        return out


class ComputeLoss:
    def __init__(self, det, hyp):
        self.hyp = hyp
        self.na, self.nc, self.nl = det.na, det.nc, det.nl
        self.anchors = det.anchors
        self.BCEcls = nn.BCEWithLogitsLoss()
        self.BCEobj = nn.BCEWithLogitsLoss()

    def __call__(self, p, targets):
        lcls, lbox, lobj = torch.zeros(1), torch.zeros(1), torch.zeros(1)
        tcls, tbox, indices, anchors = self.build_targets(p, targets)
        for i, pi in enumerate(p):
            b, a, gj, gi = indices[i]
            tobj = torch.zeros_like(pi[..., 0])
            n = b.shape[0]
            if n:
                ps = pi[b, a, gj, gi]
                pxy = ps[:, :2].sigmoid() * 2 - 0.5
                pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anchors[i]
                lbox += ((torch.cat((pxy, pwh), 1) - tbox[i]) ** 2).mean()
                tobj[b, a, gj, gi] = 1.0
                t = torch.zeros_like(ps[:, 5:])
                t[range(n), tcls[i]] = 1.0
                lcls += self.BCEcls(ps[:, 5:], t)
            lobj += self.BCEobj(pi[..., 4], tobj)
        return (lbox + lobj + lcls) * p[0].shape[0]

    def build_targets(self, p, targets):
        na, nt = self.na, targets.shape[0]
        tcls, tbox, indices, anch = [], [], [], []
        gain = torch.ones(7, device=targets.device)
        ai = torch.arange(na, device=targets.device).float().view(na, 1).repeat(1, nt)
        targets = torch.cat((targets.repeat(na, 1, 1), ai[:, :, None]), 2)

        for i in range(self.nl):
            anchors = self.anchors[i]
            gain[2:6] = torch.tensor(p[i].shape)[[3, 2, 3, 2]]
            t = targets * gain
            if nt:
                r = t[:, :, 4:6] / anchors[:, None]
                j = torch.max(r, 1 / r).max(2)[0] < self.hyp['anchor_t']
                t = t[j]
            else:
                t = targets[0]

            b, c = t[:, :2].long().T
            gxy = t[:, 2:4]
            gwh = t[:, 4:6]
            gij = gxy.long()
            gi, gj = gij.T

            a = t[:, 6].long()
            indices.append((b, a, gj.clamp_(0, gain[3].long() - 1), gi.clamp_(0, gain[2].long() - 1)))
            tbox.append(torch.cat((gxy - gij, gwh), 1))
            anch.append(anchors[a])
            tcls.append(c)
        return tcls, tbox, indices, anch


det = Detect()
compute_loss = ComputeLoss(det, {'anchor_t': 4.0})
optimizer = torch.optim.SGD(det.parameters(), lr=0.01)
for step in range(2):
    feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4)]
    # image, class, x, y, w, h (normalized)
    targets = torch.cat((torch.tensor([[0.0], [0.0], [1.0]]), torch.tensor([[0.0], [2.0], [1.0]]),
                         torch.rand(3, 2), torch.rand(3, 2) * 0.3 + 0.1), 1)
    loss = compute_loss(det(feats), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss", round(loss.item(), 4))
