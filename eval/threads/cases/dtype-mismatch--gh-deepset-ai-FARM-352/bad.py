# FARM (deepset) text classification with class weights: the DataSilo computes balanced class
# weights from the training labels (scikit-learn's compute_class_weight, written out with numpy
# here), the TextClassificationHead turns them into the weight of its CrossEntropyLoss, and the
# Trainer runs the AdaptiveModel. A small embedding-bag encoder stands in for BERT and random
# token ids for the tokenized documents.
import logging

import numpy as np
import torch
from torch import nn
from torch.nn import CrossEntropyLoss
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)
torch.manual_seed(0)
np.random.seed(0)


def compute_class_weight(class_weight, classes, y):
    """sklearn.utils.class_weight.compute_class_weight("balanced", ...)"""
    y_ind = np.searchsorted(classes, y)
    return len(y) / (len(classes) * np.bincount(y_ind).astype(np.float64))


class DataSilo:
    def __init__(self, label_list, input_ids, label_ids, batch_size):
        self.label_list = label_list
        self.tensor_names = ["input_ids", "text_classification_label_ids"]
        self.data = {"train": TensorDataset(input_ids, label_ids)}
        self.batch_size = batch_size

    def calculate_class_weights(self, task_name):
        label_list = self.label_list
        tensor_idx = list(self.tensor_names).index("text_classification_label_ids")
        # we need at least ONE observation for each label to avoid division by zero in compute_class_weights.
        observed_labels = list(label_list)
        observed_labels += [label_list[x[tensor_idx].item()] for x in self.data["train"]]

        class_weights = list(compute_class_weight("balanced", np.asarray(label_list), observed_labels))
        return class_weights

    def get_data_loader(self, dataset_name):
        return DataLoader(self.data[dataset_name], batch_size=self.batch_size, shuffle=True)


class FeedForwardBlock(nn.Module):
    def __init__(self, layer_dims):
        super().__init__()
        self.feed_forward = nn.Sequential(nn.Linear(layer_dims[0], layer_dims[1]))

    def forward(self, X):
        return self.feed_forward(X)


class TextClassificationHead(nn.Module):
    def __init__(self, num_labels=None, class_weights=None, loss_ignore_index=-100, loss_reduction="none",
                 task_name="text_classification", hidden_size=32):
        super(TextClassificationHead, self).__init__()
        self.layer_dims = [hidden_size, num_labels]
        self.feed_forward = FeedForwardBlock(self.layer_dims)
        self.num_labels = self.layer_dims[-1]
        self.task_name = task_name
        self.label_tensor_name = task_name + "_label_ids"
        self.class_weights = class_weights

        if class_weights:
            logger.info(f"Using class weights for task '{self.task_name}': {self.class_weights}")
            balanced_weights = nn.Parameter(torch.tensor(class_weights), requires_grad=False)
        else:
            balanced_weights = None

        self.loss_fct = CrossEntropyLoss(
            weight=balanced_weights,
            reduction=loss_reduction,
            ignore_index=loss_ignore_index,
        )

    def forward(self, X):
        return self.feed_forward(X)

    def logits_to_loss(self, logits, **kwargs):
        label_ids = kwargs.get(self.label_tensor_name)
        return self.loss_fct(logits, label_ids.view(-1))


class LanguageModel(nn.Module):
    def __init__(self, vocab_size=100, hidden_size=32):
        super().__init__()
        self.embeddings = nn.EmbeddingBag(vocab_size, hidden_size)

    def forward(self, input_ids):
        return self.embeddings(input_ids)


class AdaptiveModel(nn.Module):
    def __init__(self, language_model, prediction_heads, device):
        super().__init__()
        self.language_model = language_model.to(device)
        self.prediction_heads = nn.ModuleList([ph.to(device) for ph in prediction_heads])

    def forward(self, input_ids, **kwargs):
        sequence_output = self.language_model(input_ids)
        return [head(sequence_output) for head in self.prediction_heads]

    def logits_to_loss(self, logits, **kwargs):
        all_losses = [head.logits_to_loss(logits=l, **kwargs) for head, l in zip(self.prediction_heads, logits)]
        return sum(all_losses)


class Trainer:
    def __init__(self, model, optimizer, data_silo, epochs, device):
        self.model, self.optimizer, self.data_silo = model, optimizer, data_silo
        self.epochs, self.device = epochs, device

    def train(self):
        for epoch in range(1, self.epochs + 1):
            for step, (input_ids, label_ids) in enumerate(self.data_silo.get_data_loader("train")):
                batch = {"input_ids": input_ids.to(self.device),
                         "text_classification_label_ids": label_ids.to(self.device)}
                logits = self.model.forward(**batch)
                per_sample_loss = self.model.logits_to_loss(logits=logits, **batch)
                loss = per_sample_loss.mean()
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            print(f"epoch {epoch}: train loss {loss.item():.4f}")
        return self.model


device = torch.device("cpu")
label_list = ["1", "2", "3", "4", "5"]
data_silo = DataSilo(label_list, torch.randint(0, 100, (64, 12)), torch.randint(0, len(label_list), (64,)), batch_size=16)
prediction_head = TextClassificationHead(class_weights=data_silo.calculate_class_weights(task_name="text_classification"),
                                         num_labels=len(label_list))
model = AdaptiveModel(language_model=LanguageModel(), prediction_heads=[prediction_head], device=device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
trainer = Trainer(model=model, optimizer=optimizer, data_silo=data_silo, epochs=2, device=device)
trainer.train()
