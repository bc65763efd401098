# Fine-tuning a VILA-style vision-language model with the LLM frozen and gradient
# checkpointing on: the frozen embedding's output is made to require grad by a hook, and the
# dummy-media workaround adds zero-weighted image features onto the text embeddings with +=.
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLLM(nn.Module):
    def __init__(self, vocab=40, dim=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 2, 32, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self.embed_tokens.register_forward_hook(make_inputs_require_grads)


class VILA(nn.Module):
    def __init__(self):
        super().__init__()
        self.llm = TinyLLM()
        self.vision_tower = nn.Conv2d(3, 8, 4, 4)
        self.mm_projector = nn.Linear(8, 16)
        for p in self.llm.parameters():
            p.requires_grad_(False)
        self.llm.enable_input_require_grads()

    def encode_images(self, images):
        feats = self.vision_tower(images).flatten(2).transpose(1, 2)
        return self.mm_projector(feats)

    def forward(self, input_ids, images, labels, has_media):
        text_embeds = self.llm.embed_tokens(input_ids)
        media_embeds = {"dummy": deque(), "image": deque()}
        image_feats = self.encode_images(images)
        if has_media:
            media_embeds["image"].extend(image_feats.unbind(0))
        else:
            media_embeds["dummy"].extend(image_feats.unbind(0))

        # This is a workaround to make sure the dummy embeddings are consumed
        while media_embeds.get("dummy"):
            dummy_embed = media_embeds["dummy"].popleft()
            text_embeds = text_embeds + torch.sum(dummy_embed) * 0

        if media_embeds["image"]:
            img = torch.stack(list(media_embeds["image"]))
            text_embeds = torch.cat([img, text_embeds], dim=1)[:, -input_ids.size(1):]
        hidden = self.llm.block(text_embeds)
        logits = self.llm.lm_head(hidden)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))


model = VILA()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
input_ids = torch.randint(0, 40, (2, 10))
labels = torch.randint(0, 40, (2, 10))
images = torch.randn(2, 3, 8, 8)

for step, has_media in enumerate([True, False]):   # a text-only batch comes second
    loss = model(input_ids, images, labels, has_media)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
