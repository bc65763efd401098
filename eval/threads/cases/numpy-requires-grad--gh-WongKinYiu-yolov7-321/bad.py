# YOLOv7 pose estimation script (pose.py, from tools/keypoint.ipynb): load the pose model, put it
# in eval mode, run one letterboxed image through it, apply keypoint NMS and turn the detections
# into rows [batch_id, class_id, x, y, w, h, conf, keypoints...] with output_to_keypoint() for
# plotting the skeletons. A tiny conv head with the YOLO output layout stands in for
# yolov7-w6-pose.pt, a random image for person.jpg.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
NKPT = 3


class PoseModel(nn.Module):
    def __init__(self, nc=1, nkpt=NKPT):
        super().__init__()
        self.yaml = {'nc': nc, 'nkpt': nkpt}
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=4, padding=1), nn.SiLU(), nn.Conv2d(16, 16, 3, stride=4, padding=1), nn.SiLU())
        self.head = nn.Conv2d(16, 5 + nc + 3 * nkpt, 1)

    def forward(self, x):
        p = self.head(self.backbone(x))  # (bs, no, ny, nx)
        bs, no, ny, nx = p.shape
        p = p.permute(0, 2, 3, 1).reshape(bs, ny * nx, no)
        xy = p[..., :2].sigmoid() * 64
        wh = p[..., 2:4].sigmoid() * 32
        obj = p[..., 4:5 + self.yaml['nc']].sigmoid()
        return torch.cat((xy, wh, obj, p[..., 5 + self.yaml['nc']:]), -1), p


def xywh2xyxy(x):
    y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    y[:, 0] = x[:, 0] - x[:, 2] / 2
    y[:, 1] = x[:, 1] - x[:, 3] / 2
    y[:, 2] = x[:, 0] + x[:, 2] / 2
    y[:, 3] = x[:, 1] + x[:, 3] / 2
    return y


def xyxy2xywh(x):
    y = np.copy(x)
    y[:, 0] = (x[:, 0] + x[:, 2]) / 2
    y[:, 1] = (x[:, 1] + x[:, 3]) / 2
    y[:, 2] = x[:, 2] - x[:, 0]
    y[:, 3] = x[:, 3] - x[:, 1]
    return y


def non_max_suppression_kpt(prediction, conf_thres=0.25, iou_thres=0.65, nc=None, nkpt=None, kpt_label=True):
    output = [torch.zeros((0, 6 + 3 * nkpt))] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        box = xywh2xyxy(x[:, :4])
        conf, j = x[:, 5:5 + nc].max(1, keepdim=True)
        kpts = x[:, 5 + nc:]
        x = torch.cat((box, conf, j.float(), kpts), 1)
        output[xi] = x[x[:, 4].argsort(descending=True)][:10]
    return output


def output_to_keypoint(output):
    # Convert model output to target format [batch_id, class_id, x, y, w, h, conf]
    targets = []
    for i, o in enumerate(output):
        kpts = o[:, 6:]
        o = o[:, :6]
        for index, (*box, conf, cls) in enumerate(o.cpu().numpy()):
            targets.append([i, cls, *list(*xyxy2xywh(np.array(box)[None])), conf, *list(kpts.cpu().numpy()[index])])
    return np.array(targets)


device = torch.device("cpu")
model = PoseModel()  # stands for torch.load('yolov7-w6-pose.pt')['model']
model = model.to(device)
_ = model.eval()

image = torch.rand(1, 3, 64, 64)
output, _ = model(image)
output = non_max_suppression_kpt(output, 0.25, 0.65, nc=model.yaml['nc'], nkpt=model.yaml['nkpt'], kpt_label=True)
output = output_to_keypoint(output)
nimg = (image[0].permute(1, 2, 0) * 255).cpu().numpy().astype(np.uint8)
for idx in range(output.shape[0]):
    print("person", idx, "box", np.round(output[idx, 2:6], 1), "kpts", np.round(output[idx, 7:], 2)[:3])
