# protein-bert-pytorch: pretraining ProteinBERT with the PretrainingWrapper (random token
# replacement and annotation noising, then a denoising loss) on the GPU (the meta device stands
# in for it). The model is cut down to an embedding, one narrow convolution with a global
# annotation track, and the two output heads; the loss keeps the wrapper's masking but sums
# over the mask with a product (the meta device cannot run boolean-mask indexing); random
# sequences and annotations stand in for UniRef90/GO data.
import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
device = torch.device("meta")


def exists(val):
    return val is not None


class ProteinBERT(nn.Module):
    def __init__(self, *, num_tokens=26, num_annotation=64, dim=32, dim_global=16, narrow_conv_kernel=9):
        super().__init__()
        self.num_tokens = num_tokens
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.to_global_emb = nn.Linear(num_annotation, dim_global)
        self.narrow_conv = nn.Conv1d(dim, dim, narrow_conv_kernel, padding=narrow_conv_kernel // 2)
        self.global_to_local = nn.Linear(dim_global, dim)
        self.to_token_logits = nn.Linear(dim, num_tokens)
        self.to_annotation_logits = nn.Linear(dim_global, num_annotation)

    def forward(self, seq, annotation, mask=None):
        tokens = self.token_emb(seq)
        annotation = F.gelu(self.to_global_emb(annotation))
        conv_out = self.narrow_conv(tokens.transpose(1, 2)).transpose(1, 2)
        tokens = tokens + F.gelu(conv_out) + self.global_to_local(annotation)[:, None, :]
        return self.to_token_logits(tokens), self.to_annotation_logits(annotation)


def get_mask_subset_with_prob(mask, prob):
    batch, seq_len, device = *mask.shape, mask.device
    max_masked = math.ceil(prob * seq_len)

    num_tokens = mask.sum(dim=-1, keepdim=True)
    mask_excess = (mask.cumsum(dim=-1) > (num_tokens * prob).ceil())
    mask_excess = mask_excess[:, :max_masked]

    rand = torch.rand((batch, seq_len), device=device).masked_fill(~mask, -1e9)
    _, sampled_indices = rand.topk(max_masked, dim=-1)
    sampled_indices = (sampled_indices + 1).masked_fill_(mask_excess, 0)

    new_mask = torch.zeros((batch, seq_len + 1), device=device)
    new_mask.scatter_(-1, sampled_indices, 1)
    return new_mask[:, 1:].bool()


class PretrainingWrapper(nn.Module):
    def __init__(self, model, random_replace_token_prob=0.05, remove_annotation_prob=0.25, add_annotation_prob=0.01,
                 remove_all_annotations_prob=0.5, seq_loss_weight=1., annotation_loss_weight=1.,
                 exclude_token_ids=(0, 1, 2)):
        super().__init__()
        self.model = model
        self.random_replace_token_prob = random_replace_token_prob
        self.remove_annotation_prob = remove_annotation_prob
        self.add_annotation_prob = add_annotation_prob
        self.remove_all_annotations_prob = remove_all_annotations_prob
        self.seq_loss_weight = seq_loss_weight
        self.annotation_loss_weight = annotation_loss_weight
        self.exclude_token_ids = exclude_token_ids

    def forward(self, seq, annotation, mask=None):
        batch_size, device = seq.shape[0], seq.device

        seq_labels = seq
        annotation_labels = annotation

        if not exists(mask):
            mask = torch.ones_like(seq).bool()

        # prepare masks for noising sequence
        excluded_tokens_mask = mask
        for token_id in self.exclude_token_ids:
            excluded_tokens_mask = excluded_tokens_mask & (seq != token_id)
        random_replace_token_prob_mask = get_mask_subset_with_prob(excluded_tokens_mask, self.random_replace_token_prob)

        # prepare masks for noising annotation
        batch_mask = torch.ones(batch_size, device=device, dtype=torch.bool)
        batch_mask = batch_mask[:, None]
        remove_annotation_from_batch_mask = get_mask_subset_with_prob(batch_mask, self.remove_all_annotations_prob)

        annotation_mask = annotation > 0
        remove_annotation_prob_mask = get_mask_subset_with_prob(annotation_mask, self.remove_annotation_prob)
        add_annotation_prob_mask = get_mask_subset_with_prob(~annotation_mask, self.add_annotation_prob)
        remove_annotation_mask = remove_annotation_from_batch_mask & remove_annotation_prob_mask

        # generate random tokens
        random_tokens = torch.randint(0, self.model.num_tokens, seq.shape)

        for token_id in self.exclude_token_ids:
            random_replace_token_prob_mask = random_replace_token_prob_mask & (random_tokens != token_id)

        # noise sequence
        noised_seq = torch.where(random_replace_token_prob_mask, random_tokens, seq)

        # noise annotation
        noised_annotation = annotation + add_annotation_prob_mask.type(annotation.dtype)
        noised_annotation = noised_annotation * remove_annotation_mask.type(annotation.dtype)

        # denoise with model
        seq_logits, annotation_logits = self.model(noised_seq, noised_annotation, mask=mask)

        # calculate loss
        seq_loss = (F.cross_entropy(seq_logits.transpose(1, 2), seq_labels, reduction='none') * mask).sum()
        annotation_loss = F.binary_cross_entropy_with_logits(annotation_logits, annotation_labels, reduction='sum')

        return seq_loss * self.seq_loss_weight + annotation_loss * self.annotation_loss_weight


model = ProteinBERT()
learner = PretrainingWrapper(model)
learner.to(device)
optimizer = torch.optim.Adam(learner.parameters(), lr=3e-4)

seq = torch.randint(0, 21, (2, 40)).to(device)
annotation = torch.randint(0, 2, (2, 64)).float().to(device)
mask = torch.ones(2, 40).bool().to(device)
for step in range(2):
    loss = learner(seq, annotation, mask=mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, tuple(loss.shape), loss.device.type)
