# MTCNN training, P-Net stage (train_net/train_p_net.py with tools/image_tools.py): each 12x12
# crop of the batch is turned into a tensor by convert_image_to_tensor and the stack goes through
# PNet. A stand-in for torchvision's ToTensor (like it, a uint8 array is scaled to float, any
# other array keeps its dtype) and random crops and labels stand in for the WIDER FACE image list.
import datetime
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.RandomState(0)


class ToTensor:
    def __call__(self, pic):
        img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
        if img.dtype == torch.uint8:
            return img.float().div(255)
        return img


transform = ToTensor()


def convert_image_to_tensor(image):
    """convert an image to pytorch tensor

        Parameters:
        ----------
        image: numpy array , h * w * c

        Returns:
        -------
        image_tensor: pytorch.FloatTensor, c * h * w
        """
    image = image.astype(float)
    return transform(image)


class PNet(nn.Module):
    def __init__(self, is_train=False, use_cuda=True):
        super(PNet, self).__init__()
        self.is_train = is_train
        self.use_cuda = use_cuda
        self.pre_layer = nn.Sequential(
            nn.Conv2d(3, 10, kernel_size=3, stride=1), nn.PReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(10, 16, kernel_size=3, stride=1), nn.PReLU(),
            nn.Conv2d(16, 32, kernel_size=3, stride=1), nn.PReLU())
        self.conv4_1 = nn.Conv2d(32, 1, kernel_size=1, stride=1)
        self.conv4_2 = nn.Conv2d(32, 4, kernel_size=1, stride=1)

    def forward(self, x):
        x = self.pre_layer(x)
        label = torch.sigmoid(self.conv4_1(x))
        offset = self.conv4_2(x)
        return label, offset


class LossFn:
    def __init__(self, cls_factor=1, box_factor=1):
        self.loss_cls = nn.BCELoss()
        self.loss_box = nn.MSELoss()

    def cls_loss(self, gt_label, pred_label):
        pred_label = torch.squeeze(pred_label)
        mask = torch.ge(gt_label, 0)
        return self.loss_cls(torch.masked_select(pred_label, mask), torch.masked_select(gt_label, mask))

    def box_loss(self, gt_label, gt_offset, pred_offset):
        pred_offset = torch.squeeze(pred_offset)
        mask = torch.ne(gt_label, 0)
        return self.loss_box(pred_offset[mask], gt_offset[mask])


def train_data_batches(n_batches, batch_size):
    for _ in range(n_batches):
        image = rng.randint(0, 256, (batch_size, 12, 12, 3)).astype(np.uint8)
        gt_label = rng.choice([-1, 0, 1], size=batch_size).astype(np.float32)
        gt_bbox = rng.uniform(-0.2, 0.2, (batch_size, 4)).astype(np.float32)
        yield image, (gt_label, gt_bbox, None)


def train_p_net(model_store_path, end_epoch=2, frequent=2, base_lr=0.01, batch_size=32, use_cuda=True):

    if not os.path.exists(model_store_path):
        os.makedirs(model_store_path)
    net = PNet(is_train=True, use_cuda=use_cuda)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if use_cuda:
        net.to(device)
    lossfn = LossFn()
    optimizer = torch.optim.Adam(net.parameters(), lr=base_lr)

    net.train()
    for cur_epoch in range(end_epoch):
        for batch_idx, (image, (gt_label, gt_bbox, gt_landmark)) in enumerate(train_data_batches(4, batch_size)):
            im_tensor = [convert_image_to_tensor(image[i, :, :, :]) for i in range(image.shape[0])]
            im_tensor = torch.stack(im_tensor)

            gt_label = torch.from_numpy(gt_label).float()
            gt_bbox = torch.from_numpy(gt_bbox).float()
            if use_cuda:
                im_tensor = im_tensor.to(device)
                gt_label = gt_label.to(device)
                gt_bbox = gt_bbox.to(device)

            cls_pred, box_offset_pred = net(im_tensor)
            cls_loss = lossfn.cls_loss(gt_label, cls_pred)
            box_offset_loss = lossfn.box_loss(gt_label, gt_bbox, box_offset_pred)
            all_loss = cls_loss * 1.0 + box_offset_loss * 0.5

            if batch_idx % frequent == 0:
                print("[%s, Epoch: %d, Step: %d] all_loss: %.6f" % (
                    datetime.datetime.now().strftime('%Y-%m-%d'), cur_epoch + 1, batch_idx, all_loss.item()))

            optimizer.zero_grad()
            all_loss.backward()
            optimizer.step()

    torch.save(net.state_dict(), os.path.join(model_store_path, 'pnet_nodel_final.pt'))


train_p_net(model_store_path=tempfile.mkdtemp(), use_cuda=True)
