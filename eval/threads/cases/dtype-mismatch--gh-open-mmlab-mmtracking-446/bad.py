# mmtracking (MaskTrack R-CNN on YouTube-VIS 2021, a custom data pipeline): the dataset runs a
# pipeline of transforms over a `results` dict; the annotation loader keeps the category labels
# in an int32 array, the format bundle turns every array into a tensor, and the model's
# classification head computes cross entropy against them. A one-object-per-frame pooled
# feature classifier stands in for the detector; random frames stand in for the videos; the
# runner is a plain loop.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
np.random.seed(0)

NUM_CLASSES = 40


class SeqLoadAnnotations:
    def __call__(self, results):
        ann = results['ann_info']
        results['gt_labels'] = np.array(ann['labels'], dtype=np.int32)
        return results


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = np.float32(mean), np.float32(std)

    def __call__(self, results):
        results['img'] = (results['img'] - self.mean) / self.std
        return results


class DefaultFormatBundle:
    def __call__(self, results):
        results['img'] = torch.from_numpy(results['img'].transpose(2, 0, 1).copy())
        results['gt_labels'] = torch.from_numpy(results['gt_labels'])
        return results


class Collect:
    def __init__(self, keys):
        self.keys = keys

    def __call__(self, results):
        return {k: results[k] for k in self.keys}


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, results):
        for t in self.transforms:
            results = t(results)
        return results


class YouTubeVISDataset(Dataset):
    def __init__(self, n, pipeline):
        self.frames = np.random.rand(n, 24, 24, 3).astype(np.float32)
        self.labels = np.random.randint(0, NUM_CLASSES, size=n)
        self.pipeline = Compose(pipeline)

    def __getitem__(self, idx):
        results = {'img': self.frames[idx], 'ann_info': {'labels': [self.labels[idx]]}}
        return self.pipeline(results)

    def __len__(self):
        return len(self.frames)


class MaskTrackRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.cls_head = nn.Linear(16, NUM_CLASSES)

    def forward_train(self, img, gt_labels):
        feats = self.backbone(img).flatten(1)
        cls_score = self.cls_head(feats)
        loss_cls = F.cross_entropy(cls_score, gt_labels.view(-1))
        return {'loss_cls': loss_cls}

    def forward(self, img, gt_labels):
        return self.forward_train(img, gt_labels)


train_pipeline = [
    SeqLoadAnnotations(),
    Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    DefaultFormatBundle(),
    Collect(keys=['img', 'gt_labels']),
]
data_loader = DataLoader(YouTubeVISDataset(16, train_pipeline), batch_size=4, shuffle=True)
model = MaskTrackRCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

for epoch in range(2):
    model.train()
    for data in data_loader:
        losses = model(**data)
        loss = sum(v for v in losses.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss_cls {losses['loss_cls'].item():.4f}")
