import numpy as np
import torch
from torch import nn
from sklearn.utils.class_weight import compute_class_weight

y_train = np.random.randint(0, 3, 90)
class_weights = compute_class_weight("balanced", classes=np.unique(y_train), y=y_train)
criterion = nn.CrossEntropyLoss(weight=torch.tensor(class_weights, dtype=torch.float))
model = nn.Linear(6, 3)
loss = criterion(model(torch.randn(8, 6)), torch.from_numpy(y_train[:8]))
