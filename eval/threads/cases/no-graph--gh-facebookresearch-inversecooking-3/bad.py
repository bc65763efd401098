# Inverse-cooking style model: an image encoder, and an ingredient decoder whose sample() runs the
# transformer step by step (greedy, no repetition), collects the logits of every step and returns
# them with the sampled ids. The model's forward() turns those logits into the ingredient losses
# (pooled BCE, cardinality penalty, eos loss), and the training loop sums them and backpropagates.
# Random images and ingredient ids stand in for Recipe1M; a GRU cell stands in for the transformer.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")  # 'cuda' if available in the original


def label2onehot(labels, pad_value):
    inp_ = torch.unsqueeze(labels, 2)
    one_hot = torch.zeros(labels.size(0), labels.size(1), pad_value + 1, device=device)
    one_hot.scatter_(2, inp_, 1)
    one_hot, _ = one_hot.max(dim=1)
    one_hot = one_hot[:, :-1]
    one_hot[:, 0] = 0
    return one_hot


def mask_from_eos(ids, eos_value):
    mask = torch.ones(ids.size(), dtype=torch.long, device=device)
    mask_aux = torch.ones(ids.size(0), dtype=torch.long, device=device)
    for idx in range(1, ids.size(1)):
        mask_aux = mask_aux * (ids[:, idx] != eos_value).long()
        mask[:, idx] = mask[:, idx] * mask_aux
    return mask


class EncoderCNN(nn.Module):
    def __init__(self, embed_size):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, embed_size, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, images):
        return self.conv(images).flatten(1)


class DecoderTransformer(nn.Module):
    def __init__(self, embed_size, vocab_size, seq_length):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, embed_size)
        self.cell = nn.GRUCell(embed_size, embed_size)
        self.linear = nn.Linear(embed_size, vocab_size)
        self.seq_length = seq_length

    def forward(self, img_features, captions, state):
        state = self.cell(self.embed_tokens(captions[:, -1]), state)
        return self.linear(state), state

    def sample(self, img_features, first_token_value=0, replacement=False):
        fs = img_features.size(0)
        first_word = (torch.ones(fs) * first_token_value).to(device).long()
        sampled_ids = [first_word]
        logits = []
        state = img_features
        for i in range(self.seq_length):
            outputs, state = self.forward(img_features, torch.stack(sampled_ids, 1), state)
            if not replacement:
                if i == 0:
                    predicted_mask = torch.zeros(outputs.shape).float().to(device)
                else:
                    batch_ind = [j for j in range(fs) if sampled_ids[i][j] != 0]
                    predicted_mask[batch_ind, sampled_ids[i][batch_ind]] = float("-inf")
                outputs += predicted_mask
            logits.append(outputs)
            outputs_prob = torch.nn.functional.softmax(outputs, dim=-1)
            _, predicted = outputs_prob.max(1)
            sampled_ids.append(predicted.detach())
        sampled_ids = torch.stack(sampled_ids[1:], 1)
        logits = torch.stack(logits, 1).data
        return sampled_ids, logits


class InverseCookingModel(nn.Module):
    def __init__(self, ingr_decoder, image_encoder, pad_value, label_smoothing=0.1):
        super().__init__()
        self.image_encoder = image_encoder
        self.ingredient_decoder = ingr_decoder
        self.crit_ingr = nn.BCELoss(reduction="none")
        self.crit_eos = nn.BCELoss(reduction="none")
        self.pad_value = pad_value
        self.label_smoothing = label_smoothing

    def forward(self, img_inputs, target_ingrs):
        img_features = self.image_encoder(img_inputs)
        losses = {}
        target_one_hot = label2onehot(target_ingrs, self.pad_value)
        target_one_hot_smooth = label2onehot(target_ingrs, self.pad_value)
        target_one_hot_smooth[target_one_hot_smooth == 1] = 1 - self.label_smoothing
        target_one_hot_smooth[target_one_hot_smooth == 0] = self.label_smoothing / target_one_hot_smooth.size(-1)

        ingr_ids, ingr_logits = self.ingredient_decoder.sample(img_features, first_token_value=0, replacement=False)
        ingr_logits = torch.nn.functional.softmax(ingr_logits, dim=-1)
        eos = ingr_logits[:, :, 0]
        target_eos = (target_ingrs == 0) ^ (target_ingrs == self.pad_value)
        eos_pos = target_ingrs == 0
        eos_head = (target_ingrs != self.pad_value) & (target_ingrs != 0)

        mask_perminv = mask_from_eos(target_ingrs, eos_value=0)
        ingr_probs = ingr_logits * mask_perminv.float().unsqueeze(-1)
        ingr_probs, _ = torch.max(ingr_probs, dim=1)
        ingr_probs = ingr_probs[:, :-1]

        losses["ingr_loss"] = torch.mean(self.crit_ingr(ingr_probs, target_one_hot_smooth), dim=-1)
        losses["card_penalty"] = torch.abs((ingr_probs * target_one_hot).sum(1) - target_one_hot.sum(1)) + \
            torch.abs((ingr_probs * (1 - target_one_hot)).sum(1))
        eos_loss = self.crit_eos(eos, target_eos.float())
        losses["eos_loss"] = 0.5 * (eos_loss * eos_pos.float()).sum(1) / (eos_pos.float().sum(1) + 1e-6) + \
            0.5 * (eos_loss * eos_head.float()).sum(1) / (eos_head.float().sum(1) + 1e-6)
        return losses


vocab, maxnumlabels = 12, 6
model = InverseCookingModel(DecoderTransformer(16, vocab, maxnumlabels), EncoderCNN(16), pad_value=vocab - 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_weights = {"ingr_loss": 1000.0, "eos_loss": 1.0, "card_penalty": 1.0}

for step in range(3):
    img_inputs = torch.randn(4, 3, 16, 16, device=device)
    ingr_gt = torch.randint(1, vocab - 1, (4, maxnumlabels), device=device)
    ingr_gt[:, 3] = 0
    ingr_gt[:, 4:] = vocab - 1
    losses = model(img_inputs, ingr_gt)
    loss = 0
    for name, w in loss_weights.items():
        loss = loss + w * losses[name].mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 3))
