# ProtoPNet local analysis (local_analysis.py): the trained prototype network is loaded with
# torch.load from the file main.py saved during training, wrapped in DataParallel, and one test
# image is classified; its most activated prototypes are then listed. The network (a VGG-style
# backbone with BatchNorm, add-on layers, prototype vectors, a last layer) is trained for a few
# steps here and saved to a temporary folder first, as main.py does; random images stand in for
# CUB-200.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PPNet(nn.Module):
    def __init__(self, img_size=32, prototype_shape=(20, 16, 1, 1), num_classes=4):
        super().__init__()
        self.img_size = img_size
        self.prototype_shape = prototype_shape
        self.num_prototypes = prototype_shape[0]
        self.num_classes = num_classes
        self.epsilon = 1e-4
        self.prototype_activation_function = 'log'
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.add_on_layers = nn.Sequential(nn.Conv2d(32, prototype_shape[1], 1), nn.Sigmoid())
        self.prototype_vectors = nn.Parameter(torch.rand(prototype_shape))
        self.ones = nn.Parameter(torch.ones(prototype_shape), requires_grad=False)
        self.last_layer = nn.Linear(self.num_prototypes, num_classes, bias=False)

    def conv_features(self, x):
        return self.add_on_layers(self.features(x))

    def _l2_convs(self, x):
        x2_patch_sum = F.conv2d(input=x ** 2, weight=self.ones)
        p2 = torch.sum(self.prototype_vectors ** 2, dim=(1, 2, 3)).view(-1, 1, 1)
        xp = F.conv2d(input=x, weight=self.prototype_vectors)
        return F.relu(x2_patch_sum - 2 * xp + p2)

    def distance_2_similarity(self, distances):
        return torch.log((distances + 1) / (distances + self.epsilon))

    def forward(self, x):
        distances = self._l2_convs(self.conv_features(x))
        min_distances = -F.max_pool2d(-distances, kernel_size=(distances.size()[2], distances.size()[3]))
        min_distances = min_distances.view(-1, self.num_prototypes)
        prototype_activations = self.distance_2_similarity(min_distances)
        logits = self.last_layer(prototype_activations)
        return logits, min_distances

    def push_forward(self, x):
        conv_output = self.conv_features(x)
        distances = self._l2_convs(conv_output)
        return conv_output, distances


# ---- main.py: train, then save the whole model (torch.save(model, ...)) ----
save_dir = tempfile.mkdtemp()
ppnet_train = PPNet()
optimizer = torch.optim.Adam(ppnet_train.parameters(), lr=1e-3)
for step in range(5):
    images, labels = torch.rand(8, 3, 32, 32), torch.randint(0, 4, (8,))
    logits, _ = ppnet_train(images)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
load_model_path = os.path.join(save_dir, '10_18push0.7822.pth')
torch.save(ppnet_train, load_model_path)

# ---- local_analysis.py ----
ppnet = torch.load(load_model_path, weights_only=False)
ppnet_multi = torch.nn.DataParallel(ppnet)
img_size = ppnet_multi.module.img_size
prototype_shape = ppnet.prototype_shape
max_dist = prototype_shape[1] * prototype_shape[2] * prototype_shape[3]

test_image = torch.rand(3, img_size, img_size)
images_test = test_image.unsqueeze(0)
labels_test = torch.tensor([2])

logits, min_distances = ppnet_multi(images_test)
conv_output, distances = ppnet.push_forward(images_test)
prototype_activations = ppnet.distance_2_similarity(min_distances)
prototype_activation_patterns = ppnet.distance_2_similarity(distances)

tables = []
for i in range(logits.size(0)):
    tables.append((torch.argmax(logits, dim=1)[i].item(), labels_test[i].item()))
    print(str(i) + ' ' + str(tables[-1]))
idx = 0
print('Predicted: ' + str(tables[idx][0]))
print('Actual: ' + str(tables[idx][1]))
array_act, sorted_indices_act = torch.sort(prototype_activations[idx])
for i in range(1, 4):
    print('top {0} activated prototype: {1} (similarity {2:.4f})'.format(
        i, sorted_indices_act[-i].item(), array_act[-i].item()))

# -- corpus check --
reference = torch.load(load_model_path, weights_only=False)
reference.eval()
with torch.no_grad():
    expected_logits, _ = reference(images_test)
if not torch.allclose(logits.detach(), expected_logits, atol=1e-5):
    print("BUG: the loaded network classified the test image in training mode (BatchNorm on a batch of one)")
