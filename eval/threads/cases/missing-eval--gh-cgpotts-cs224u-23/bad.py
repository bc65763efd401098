# Course code in the scikit-learn style: TorchShallowNeuralClassifier builds its network in fit()
# from define_graph() and predicts under no_grad; the word-entailment homework subclasses it with
# a define_graph that adds a dropout layer, fits it and scores the dev set with predict().
import numpy as np
import torch
import torch.nn as nn
import torch.utils.data

torch.manual_seed(0)


class TorchModelBase(object):
    def __init__(self, hidden_dim=16, hidden_activation=nn.Tanh(), batch_size=16, max_iter=5, eta=0.01,
                 optimizer=torch.optim.Adam, l2_strength=0, device='cpu'):
        self.hidden_dim = hidden_dim
        self.hidden_activation = hidden_activation
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.eta = eta
        self.optimizer = optimizer
        self.l2_strength = l2_strength
        self.device = device
        self.errors = []
        self.dev_predictions = {}


class TorchShallowNeuralClassifier(TorchModelBase):
    def define_graph(self):
        return nn.Sequential(
            nn.Linear(self.input_dim, self.hidden_dim),
            self.hidden_activation,
            nn.Linear(self.hidden_dim, self.n_classes_))

    def fit(self, X, y, **kwargs):
        X = np.array(X)
        self.input_dim = X.shape[1]
        self.classes_ = sorted(set(y))
        self.n_classes_ = len(self.classes_)
        class2index = dict(zip(self.classes_, range(self.n_classes_)))
        y = [class2index[label] for label in y]
        dataset = torch.utils.data.TensorDataset(torch.tensor(X, dtype=torch.float), torch.tensor(y, dtype=torch.long))
        dataloader = torch.utils.data.DataLoader(dataset, batch_size=self.batch_size, shuffle=True)
        # Graph:
        self.model = self.define_graph()
        self.model.to(self.device)
        # Optimization:
        loss = nn.CrossEntropyLoss()
        optimizer = self.optimizer(self.model.parameters(), lr=self.eta, weight_decay=self.l2_strength)
        # Train:
        for iteration in range(1, self.max_iter + 1):
            epoch_error = 0.0
            for X_batch, y_batch in dataloader:
                batch_preds = self.model(X_batch.to(self.device))
                err = loss(batch_preds, y_batch.to(self.device))
                epoch_error += err.item()
                optimizer.zero_grad()
                err.backward()
                optimizer.step()
            self.errors.append(epoch_error)
        return self

    def predict_proba(self, X):
        with torch.no_grad():
            X = torch.tensor(X, dtype=torch.float).to(self.device)
            preds = self.model(X)
            return torch.softmax(preds, dim=1).cpu().numpy()

    def predict(self, X):
        probs = self.predict_proba(X)
        return [self.classes_[i] for i in probs.argmax(axis=1)]


# hw4_wordentail: a deeper classifier with dropout
class TorchDeepNeuralClassifier(TorchShallowNeuralClassifier):
    def __init__(self, dropout_prob=0.7, **kwargs):
        self.dropout_prob = dropout_prob
        super(TorchDeepNeuralClassifier, self).__init__(**kwargs)

    def define_graph(self):
        return nn.Sequential(
            nn.Linear(self.input_dim, self.hidden_dim),
            nn.Dropout(p=self.dropout_prob),
            self.hidden_activation,
            nn.Linear(self.hidden_dim, self.n_classes_))


rng = np.random.default_rng(0)
X_train = rng.standard_normal((64, 10)).astype(np.float32)
y_train = ['entails' if x[0] + x[1] > 0 else 'neutral' for x in X_train]
X_dev = rng.standard_normal((32, 10)).astype(np.float32)

net = TorchDeepNeuralClassifier(dropout_prob=0.7, hidden_dim=16)
net.fit(X_train, y_train)
probs = net.predict_proba(X_dev)
predictions = net.predict(X_dev)
print(predictions[:8])

# -- corpus check --
reference = net.define_graph()
reference.load_state_dict(net.model.state_dict())
reference.eval()
with torch.no_grad():
    expected = torch.softmax(reference(torch.tensor(X_dev)), dim=1).numpy()
if not np.allclose(probs, expected, atol=1e-5):
    print("BUG: predict_proba ran the network with its dropout active")
