# Ranking protein-protein docking models with a 3-D CNN: NeuralNet wraps the network, optimizer
# and data; train() runs _epoch over the training, validation and test loaders each epoch, and
# test() runs one _epoch over the test set; _epoch only steps the optimizer when train_model is set.
import numpy as np
import torch
import torch.nn as nn
import torch.utils.data as data_utils

torch.manual_seed(0)


class cnn_reg(nn.Module):
    def __init__(self, input_shape):
        super().__init__()
        self.conv1 = nn.Conv3d(input_shape[0], 4, kernel_size=2)
        self.pool = nn.MaxPool3d((2, 2, 2))
        self.fc1 = nn.Linear(4 * 3 * 3 * 3, 16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = x.view(x.size(0), -1)
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class NeuralNet():
    def __init__(self, data_set, model, task='reg', lr=0.005):
        self.data_set = data_set
        self.net = model(data_set[0][0].shape)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=lr, momentum=0.9)
        self.criterion = nn.MSELoss(reduction='sum')
        self.task = task
        self.losses = {}

    def train(self, nepoch=3, train_batch_size=4, index_train=None, index_valid=None):
        train_loader = data_utils.DataLoader(data_utils.Subset(self.data_set, index_train),
                                             batch_size=train_batch_size, shuffle=False)
        valid_loader = data_utils.DataLoader(data_utils.Subset(self.data_set, index_valid),
                                             batch_size=train_batch_size, shuffle=False)
        self.losses = {'train': [], 'valid': []}
        for epoch in range(nepoch):
            train_loss, _ = self._epoch(train_loader, train_model=True)
            valid_loss, _ = self._epoch(valid_loader, train_model=False)
            self.losses['train'].append(train_loss)
            self.losses['valid'].append(valid_loss)
            print(f"epoch {epoch:03d}  train loss {train_loss:1.3e}  valid loss {valid_loss:1.3e}")

    def test(self, index_test):
        test_loader = data_utils.DataLoader(data_utils.Subset(self.data_set, index_test), batch_size=4)
        test_loss, data = self._epoch(test_loader, train_model=False)
        print(f"test loss {test_loss:1.3e}")
        return test_loss, data

    def _epoch(self, data_loader, train_model):
        running_loss = 0
        data = {'outputs': [], 'targets': []}
        n = 0
        self.net.train(mode=train_model)
        for inputs, targets in data_loader:
            outputs = self.net(inputs)
            loss = self.criterion(outputs, targets)
            running_loss += loss.data.item()
            n += len(inputs)
            if train_model:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            data['outputs'] += outputs.data.numpy().tolist()
            data['targets'] += targets.data.numpy().tolist()
        data['outputs'] = np.array(data['outputs'])
        data['targets'] = np.array(data['targets'])
        return running_loss / n, data


features = torch.randn(24, 2, 7, 7, 7)
targets = features.mean(dim=(1, 2, 3, 4)).unsqueeze(1)
data_set = data_utils.TensorDataset(features, targets)
model = NeuralNet(data_set, cnn_reg)
model.train(nepoch=3, index_train=list(range(16)), index_valid=list(range(16, 20)))
test_loss, test_data = model.test(list(range(20, 24)))

# -- corpus check --
reference = cnn_reg(features[0].shape)
reference.load_state_dict(model.net.state_dict())
reference.eval()
with torch.no_grad():
    expected = reference(features[20:24]).numpy()
if not np.allclose(test_data['outputs'], expected, atol=1e-5):
    print("BUG: the test set was scored with the network in training mode (dropout active)")
