# Head-pose regression data pipeline (fastai v1 lesson3-head-pose): the head centre of each image
# is computed from the BIWI calibration with numpy, wrapped as image points (a FlowField), and a
# random affine augmentation (rotation) is applied to the points with torch.addmm.
import math

import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)

cal = np.array([[517.679, 0, 320], [0, 517.679, 240.5], [0, 0, 1]])


def convert_biwi(coords):
    c1 = coords[0] * cal[0][0] / coords[2] + cal[0][2]
    c2 = coords[1] * cal[1][1] / coords[2] + cal[1][2]
    return torch.tensor([c2, c1])


def get_ctr(ctr_file_values):
    return convert_biwi(ctr_file_values)


class FlowField:
    "Wrap together some coords `flow` with a `size`."
    def __init__(self, size, flow):
        self.size, self.flow = size, flow.float()


class ImagePoints:
    def __init__(self, flow):
        self.flow = flow

    def affine(self, m):
        c = self.flow
        size = c.flow.size()
        h, w = c.size
        m[0, 1] *= h / w
        m[1, 0] *= w / h
        c.flow = c.flow.view(-1, 2)
        c.flow = torch.addmm(m[:2, 2], c.flow, m[:2, :2].t()).view(size)
        return self


def rotate_matrix(degrees):
    angle = degrees * math.pi / 180
    return torch.tensor([[math.cos(angle), -math.sin(angle), 0.],
                         [math.sin(angle), math.cos(angle), 0.],
                         [0., 0., 1.]])


def scale_flow(flow, size):
    return flow * 2 / torch.tensor(size, dtype=torch.float32) - 1


size = (480, 640)
for ctr_values in np.random.uniform([-50, -50, 800], [50, 50, 1200], size=(3, 3)):
    ctr = get_ctr(ctr_values)
    pts = ImagePoints(FlowField(size, scale_flow(ctr[None], size)))
    pts = pts.affine(rotate_matrix(np.random.uniform(-10, 10)))
    print("augmented centre", [round(v, 3) for v in pts.flow.flow[0].tolist()], pts.flow.flow.dtype)
