# A declarative deep-learning toolbox: LudwigModel.train() builds an ECD model (input encoders,
# combiner, output decoders) and hands it to a Trainer, which evaluates the validation set with a
# Predictor after each epoch; LudwigModel.predict() asks a Predictor for predictions on new data.
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class ECD(nn.Module):
    def __init__(self, n_in, n_classes, dropout=0.3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Dropout(dropout))
        self.combiner = nn.Sequential(nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(dropout))
        self.decoder = nn.Linear(32, n_classes)

    def forward(self, inputs):
        return {'label': {'logits': self.decoder(self.combiner(self.encoder(inputs['x'])))}}

    def predictions(self, inputs):
        logits = self(inputs)['label']['logits']
        return {'label': {'predictions': logits.argmax(-1), 'probabilities': torch.softmax(logits, -1)}}


class Predictor:
    def __init__(self, batch_size=16):
        self._batch_size = batch_size

    def batch_predict(self, model, dataset, dataset_name=None):
        predictions = defaultdict(list)
        with torch.no_grad():
            for start in range(0, len(dataset['x']), self._batch_size):
                batch = {'x': torch.from_numpy(dataset['x'][start:start + self._batch_size])}
                preds = model.predictions(batch)
                for of_name, of_preds in preds.items():
                    for pred_name, pred_values in of_preds.items():
                        predictions[f'{of_name}_{pred_name}'].append(pred_values)
        return {key: torch.cat(values).numpy() for key, values in predictions.items()}

    def batch_evaluation(self, model, dataset, dataset_name=None):
        predictions = self.batch_predict(model, dataset, dataset_name)
        accuracy = float((predictions['label_predictions'] == dataset['label']).mean())
        return {'label': {'accuracy': accuracy}}, predictions


class Trainer:
    def __init__(self, epochs=3, batch_size=16, learning_rate=0.01):
        self.epochs, self.batch_size, self.learning_rate = epochs, batch_size, learning_rate

    def train(self, model, training_set, validation_set=None):
        optimizer = torch.optim.Adam(model.parameters(), lr=self.learning_rate)
        predictor = Predictor(batch_size=self.batch_size)
        x, y = torch.from_numpy(training_set['x']), torch.from_numpy(training_set['label'])
        for epoch in range(self.epochs):
            model.train()
            for start in range(0, len(x), self.batch_size):
                optimizer.zero_grad()
                logits = model({'x': x[start:start + self.batch_size]})['label']['logits']
                loss = nn.functional.cross_entropy(logits, y[start:start + self.batch_size])
                loss.backward()
                optimizer.step()
            if validation_set is not None:
                metrics, _ = predictor.batch_evaluation(model, validation_set, dataset_name='validation')
                print(f"epoch {epoch}: validation accuracy {metrics['label']['accuracy']:.3f}")
        return model


class LudwigModel:
    def __init__(self, config):
        self.config = config
        self.model = None

    def train(self, training_set, validation_set=None):
        self.model = ECD(self.config['n_in'], self.config['n_classes'])
        Trainer(**self.config['training']).train(self.model, training_set, validation_set)
        return self

    def predict(self, dataset):
        predictor = Predictor(batch_size=self.config['training']['batch_size'])
        return predictor.batch_predict(self.model, dataset)


rng = np.random.default_rng(0)
def make_dataset(n):
    x = rng.standard_normal((n, 8)).astype(np.float32)
    return {'x': x, 'label': (x[:, 0] > 0).astype(np.int64)}


config = {'n_in': 8, 'n_classes': 2, 'training': {'epochs': 3, 'batch_size': 16, 'learning_rate': 0.01}}
ludwig_model = LudwigModel(config).train(make_dataset(64), make_dataset(32))
test_set = make_dataset(32)
predictions = ludwig_model.predict(test_set)
print(predictions['label_predictions'][:10])

# -- corpus check --
reference = ECD(config['n_in'], config['n_classes'])
reference.load_state_dict(ludwig_model.model.state_dict())
reference.eval()
with torch.no_grad():
    expected = reference.predictions({'x': torch.from_numpy(test_set['x'])})['label']['probabilities']
if not np.allclose(predictions['label_probabilities'], expected.numpy(), atol=1e-5):
    print("BUG: the predictor ran the model in training mode (dropout and batch statistics)")
