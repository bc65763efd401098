# CLEVR IEP training script (scripts/train_model.py), CNN+LSTM baseline: train_loop() trains the
# models, and every checkpoint_every iterations check_accuracy() switches them to eval mode with
# set_mode(), measures train and val accuracy, and switches the mode again before returning.
# Random image features and questions stand in for CLEVR; the volatile Variables of the
# original check_accuracy are written as torch.no_grad() here.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CnnLstmModel(nn.Module):
    def __init__(self, vocab_size=20, num_answers=5, rnn_dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 8)
        self.rnn = nn.LSTM(8, rnn_dim, batch_first=True)
        self.cnn = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Linear(rnn_dim + 8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5),
                                        nn.Linear(32, num_answers))

    def forward(self, questions, feats):
        _, (h, _) = self.rnn(self.embed(questions))
        img = self.cnn(feats).flatten(1)
        return self.classifier(torch.cat([h[-1], img], 1))


def set_mode(mode, models):
    assert mode in ['train', 'eval']
    for m in models:
        if m is None: continue
        if mode == 'train': m.train()
        if mode == 'eval': m.eval()


def check_accuracy(args, program_generator, execution_engine, baseline_model, loader):
    set_mode('eval', [program_generator, execution_engine, baseline_model])
    num_correct, num_samples = 0, 0
    for batch in loader:
        questions, _, feats, answers, programs, _ = batch
        scores = None
        if args.model_type in ['LSTM', 'CNN+LSTM', 'CNN+LSTM+SA']:
            with torch.no_grad():
                scores = baseline_model(questions, feats)
        if scores is not None:
            _, preds = scores.data.cpu().max(1)
            num_correct += (preds == answers).sum().item()
            num_samples += preds.size(0)
        if num_samples >= args.num_val_samples:
            break

    set_mode('eval', [program_generator, execution_engine, baseline_model])
    acc = float(num_correct) / num_samples
    return acc


def train_loop(args, train_loader, val_loader):
    program_generator, execution_engine = None, None
    baseline_model = CnnLstmModel()
    baseline_optimizer = torch.optim.Adam(baseline_model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    stats = {'train_losses': [], 'train_accs': [], 'val_accs': [], 'best_val_acc': -1}
    t, epoch = 0, 0
    set_mode('train', [program_generator, execution_engine, baseline_model])

    while t < args.num_iterations:
        epoch += 1
        print('Starting epoch %d' % epoch)
        for batch in train_loader:
            t += 1
            questions, _, feats, answers, programs, _ = batch
            if args.model_type in ['LSTM', 'CNN+LSTM', 'CNN+LSTM+SA']:
                baseline_optimizer.zero_grad()
                baseline_model.zero_grad()
                scores = baseline_model(questions, feats)
                loss = loss_fn(scores, answers)
                loss.backward()
                baseline_optimizer.step()

            if t % args.record_loss_every == 0:
                print(t, loss.item())
                stats['train_losses'].append(loss.item())

            if t % args.checkpoint_every == 0:
                train_acc = check_accuracy(args, program_generator, execution_engine, baseline_model, train_loader)
                val_acc = check_accuracy(args, program_generator, execution_engine, baseline_model, val_loader)
                print('train accuracy is', train_acc, 'val accuracy is', val_acc)
                stats['train_accs'].append(train_acc)
                stats['val_accs'].append(val_acc)
            if t == args.num_iterations:
                break
    return baseline_model


def make_loader(n_batches, batch_size=8):
    return [(torch.randint(0, 20, (batch_size, 6)), None, torch.randn(batch_size, 4, 6, 6),
             torch.randint(0, 5, (batch_size,)), [None], None) for _ in range(n_batches)]


args = SimpleNamespace(model_type='CNN+LSTM', num_iterations=12, record_loss_every=4, checkpoint_every=4,
                       num_val_samples=16)
steps_in_eval_mode = []


def record_mode(module, inputs):  # corpus instrumentation, not part of the thread's code
    if torch.is_grad_enabled() and isinstance(module, CnnLstmModel):
        steps_in_eval_mode.append(not module.training)


torch.nn.modules.module.register_module_forward_pre_hook(record_mode)
train_loop(args, make_loader(4), make_loader(2))

# -- corpus check --
if any(steps_in_eval_mode):
    print("BUG: %d of %d training steps ran with the model left in eval mode after check_accuracy()"
          % (sum(steps_in_eval_mode), len(steps_in_eval_mode)))
