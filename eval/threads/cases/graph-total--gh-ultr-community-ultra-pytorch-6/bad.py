# Unbiased learning to rank (dual learning algorithm): a ranker and a propensity model are
# trained together; DLA.train() returns the step loss and the main loop averages it per
# checkpoint and keeps the checkpoint losses for learning-rate decay decisions.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
RANK_LIST_SIZE = 10
STEPS_PER_CHECKPOINT = 5


class DLA:
    def __init__(self, feature_size=16, learning_rate=0.05):
        self.model = nn.Sequential(nn.Linear(feature_size, 32), nn.ELU(), nn.Linear(32, 1))
        self.propensity_model = nn.Linear(RANK_LIST_SIZE, RANK_LIST_SIZE)
        self.learning_rate = learning_rate
        self.ranker_loss_weight = 1.0
        self.global_step = 0

    def loss_func(self, output, labels, weights):
        label_dis = labels * weights / (labels * weights).sum(dim=1, keepdim=True).clamp(min=1e-6)
        return torch.mean(-(label_dis * F.log_softmax(output, dim=1)).sum(dim=1))

    def get_normalized_weights(self, propensity):
        return (propensity[:, :1] / propensity).detach()

    def separate_gradient_update(self):
        opt_denoise = torch.optim.Adagrad(self.propensity_model.parameters(), lr=self.learning_rate)
        opt_ranker = torch.optim.Adagrad(self.model.parameters(), lr=self.learning_rate)
        opt_denoise.zero_grad()
        opt_ranker.zero_grad()
        self.loss.backward()
        opt_denoise.step()
        opt_ranker.step()

    def train(self, input_feed):
        self.model.train()
        features, labels = input_feed['features'], input_feed['labels']
        train_output = self.model(features).squeeze(-1)
        self.propensity = self.propensity_model(labels)
        self.propensity_weights = self.get_normalized_weights(torch.softmax(self.propensity, dim=1))
        self.rank_loss = self.loss_func(train_output, labels, self.propensity_weights)
        self.relevance_weights = self.get_normalized_weights(torch.softmax(train_output, dim=1))
        self.exam_loss = self.loss_func(self.propensity, labels, self.relevance_weights)
        self.loss = self.exam_loss + self.ranker_loss_weight * self.rank_loss
        self.separate_gradient_update()
        self.global_step += 1
        summary = {'loss': self.loss.item()}
        return self.loss, None, summary


def get_batch():
    return {'features': torch.randn(8, RANK_LIST_SIZE, 16),
            'labels': (torch.rand(8, RANK_LIST_SIZE) < 0.3).float()}


model = DLA()
step_time, loss = 0.0, 0.0
current_step = 0
previous_losses = []
while current_step < 4 * STEPS_PER_CHECKPOINT:
    start_time = time.time()
    input_feed = get_batch()
    step_loss, _, summary = model.train(input_feed)
    step_time += (time.time() - start_time) / STEPS_PER_CHECKPOINT
    loss += step_loss / STEPS_PER_CHECKPOINT
    current_step += 1
    if current_step % STEPS_PER_CHECKPOINT == 0:
        print("global step %d learning rate %.4f step-time %.2f loss %.4f" % (
            model.global_step, model.learning_rate, step_time, loss))
        if len(previous_losses) > 2 and loss > max(previous_losses[-3:]):
            model.learning_rate *= 0.5
        previous_losses.append(loss)
        step_time, loss = 0.0, 0.0

# -- corpus check --
if any(torch.is_tensor(l) and l.grad_fn is not None for l in previous_losses):
    print("BUG: the checkpoint losses kept in previous_losses still hold the autograd graphs of their steps")
