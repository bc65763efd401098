# Aspect-based sentiment classification (ASGCN repository) with its ASCNN model: a BiLSTM over the
# sentence, two position-weighted Conv1d layers and aspect-masked attention, trained by train.py's
# Instructor. Random token ids stand in for the twitter/laptop datasets; a plain LSTM stands in for
# the repository's DynamicLSTM (which packs the padded batch).
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


class ASCNN(nn.Module):
    def __init__(self, embedding_matrix, opt):
        super(ASCNN, self).__init__()
        self.opt = opt
        self.embed = nn.Embedding.from_pretrained(torch.tensor(embedding_matrix, dtype=torch.float))
        self.text_lstm = nn.LSTM(opt.embed_dim, opt.hidden_dim, num_layers=1, batch_first=True, bidirectional=True)
        self.conv1 = nn.Conv1d(2*opt.hidden_dim, 2*opt.hidden_dim, 3, padding=1)
        self.conv2 = nn.Conv1d(2*opt.hidden_dim, 2*opt.hidden_dim, 3, padding=1)
        self.fc = nn.Linear(2*opt.hidden_dim, opt.polarities_dim)
        self.text_embed_dropout = nn.Dropout(0.3)

    def position_weight(self, x, aspect_double_idx, text_len, aspect_len):
        batch_size = x.shape[0]
        seq_len = x.shape[1]
        aspect_double_idx = aspect_double_idx.cpu().numpy()
        text_len = text_len.cpu().numpy()
        aspect_len = aspect_len.cpu().numpy()
        weight = [[] for i in range(batch_size)]
        for i in range(batch_size):
            context_len = text_len[i] - aspect_len[i]
            for j in range(aspect_double_idx[i, 0]):
                weight[i].append(1-(aspect_double_idx[i, 0]-j)/context_len)
            for j in range(aspect_double_idx[i, 0], aspect_double_idx[i, 1]+1):
                weight[i].append(0)
            for j in range(aspect_double_idx[i, 1]+1, text_len[i]):
                weight[i].append(1-(j-aspect_double_idx[i, 1])/context_len)
            for j in range(text_len[i], seq_len):
                weight[i].append(0)
        weight = torch.tensor(weight).unsqueeze(2).to(self.opt.device)
        return weight*x

    def mask(self, x, aspect_double_idx):
        batch_size, seq_len = x.shape[0], x.shape[1]
        aspect_double_idx = aspect_double_idx.cpu().numpy()
        mask = [[] for i in range(batch_size)]
        for i in range(batch_size):
            for j in range(aspect_double_idx[i, 0]):
                mask[i].append(0)
            for j in range(aspect_double_idx[i, 0], aspect_double_idx[i, 1]+1):
                mask[i].append(1)
            for j in range(aspect_double_idx[i, 1]+1, seq_len):
                mask[i].append(0)
        mask = torch.tensor(mask).unsqueeze(2).float().to(self.opt.device)
        return mask*x

    def forward(self, inputs):
        text_indices, aspect_indices, left_indices = inputs
        text_len = torch.sum(text_indices != 0, dim=1)
        aspect_len = torch.sum(aspect_indices != 0, dim=-1)
        left_len = torch.sum(left_indices != 0, dim=-1)
        aspect_double_idx = torch.cat([left_len.unsqueeze(1), (left_len+aspect_len-1).unsqueeze(1)], dim=1)
        text = self.embed(text_indices)
        text = self.text_embed_dropout(text)
        text_out, (_, _) = self.text_lstm(text)
        x = F.relu(self.conv1(self.position_weight(text_out, aspect_double_idx, text_len, aspect_len).transpose(1, 2)))
        x = F.relu(self.conv2(self.position_weight(x.transpose(1, 2), aspect_double_idx, text_len, aspect_len).transpose(1, 2)))
        x = self.mask(x.transpose(1, 2), aspect_double_idx)
        alpha_mat = torch.matmul(x, text_out.transpose(1, 2))
        alpha = F.softmax(alpha_mat.sum(1, keepdim=True), dim=2)
        x = torch.matmul(alpha, text_out).squeeze(1)  # batch_size x 2*hidden_dim
        output = self.fc(x)
        return output


def make_batch(batch_size=8, seq_len=12, vocab=50):
    text, aspect, left = (torch.zeros(batch_size, seq_len, dtype=torch.long) for _ in range(3))
    for b in range(batch_size):
        n = np.random.randint(6, seq_len + 1)
        start, alen = np.random.randint(1, n - 2), np.random.randint(1, 3)
        text[b, :n] = torch.randint(1, vocab, (n,))
        aspect[b, :alen] = text[b, start:start + alen]
        left[b, :start] = text[b, :start]
    return {"text_indices": text, "aspect_indices": aspect, "left_indices": left,
            "polarity": torch.randint(0, 3, (batch_size,))}


class Instructor:
    def __init__(self, opt):
        self.opt = opt
        embedding_matrix = np.random.uniform(-0.25, 0.25, (50, opt.embed_dim))
        self.model = opt.model_class(embedding_matrix, opt).to(opt.device)

    def _train(self, criterion, optimizer):
        for epoch in range(self.opt.num_epoch):
            self.model.train()
            for i_batch in range(3):
                sample_batched = make_batch()
                optimizer.zero_grad()
                inputs = [sample_batched[col].to(self.opt.device) for col in self.opt.inputs_cols]
                targets = sample_batched['polarity'].to(self.opt.device)
                outputs = self.model(inputs)
                loss = criterion(outputs, targets)
                loss.backward()
                optimizer.step()
            print('epoch', epoch, 'loss: {:.4f}'.format(loss.item()))

    def run(self):
        criterion = nn.CrossEntropyLoss()
        _params = filter(lambda p: p.requires_grad, self.model.parameters())
        optimizer = self.opt.optimizer(_params, lr=self.opt.learning_rate, weight_decay=self.opt.l2reg)
        self._train(criterion, optimizer)


opt = argparse.Namespace(model_class=ASCNN, inputs_cols=['text_indices', 'aspect_indices', 'left_indices'],
                         embed_dim=16, hidden_dim=16, polarities_dim=3, learning_rate=0.001, l2reg=0.00001,
                         num_epoch=2, optimizer=torch.optim.Adam, device=torch.device('cpu'))
Instructor(opt).run()
