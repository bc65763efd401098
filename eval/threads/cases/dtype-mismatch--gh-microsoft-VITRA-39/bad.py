# VITRA's minimum usage example for zero-shot human action prediction: load the model and the
# dataset normalizer, give the camera field of view and the hand state, normalize and pad the state
# to the unified size, and call model.predict_action(). A small model stands in for
# VITRA-VLA-3B (an image/instruction embedding, a state projector, the MLP fov encoder and an action
# head iterated for a few denoising steps) and a small Normalizer for the released statistics.
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
np.random.seed(0)


class Normalizer:  # vitra.utils.data_utils: Gaussian statistics stored as float32 arrays
    def __init__(self, state_dim=122, action_dim=102):
        self.state_mean = np.random.randn(state_dim).astype(np.float32)
        self.state_std = (np.random.rand(state_dim) + 0.5).astype(np.float32)
        self.action_mean = np.random.randn(action_dim).astype(np.float32)
        self.action_std = (np.random.rand(action_dim) + 0.5).astype(np.float32)

    def normalize_state(self, state: np.ndarray, epsilon=1e-7) -> np.ndarray:
        return (state - self.state_mean) / (self.state_std + epsilon)

    def unnormalize_action(self, action):
        return action * self.action_std + self.action_mean


def pad_state_human(state, state_mask, action_dim, state_dim, unified_state_dim):
    current_state = torch.tensor(state, dtype=torch.float32)
    current_state_mask = torch.tensor(state_mask, dtype=torch.bool)
    expanded_state_mask = current_state_mask.repeat_interleave(state_dim // 2)
    current_state_masked = current_state * expanded_state_mask.to(current_state.dtype)
    padded_state = torch.zeros(unified_state_dim, dtype=current_state.dtype)
    padded_mask = torch.zeros(unified_state_dim, dtype=torch.bool)
    padded_state[:action_dim // 2] = current_state_masked[:action_dim // 2].clone()
    padded_mask[:action_dim // 2] = expanded_state_mask[:action_dim // 2].clone()
    padded_state[action_dim // 2:action_dim] = current_state_masked[state_dim // 2:state_dim // 2 + action_dim // 2].clone()
    padded_mask[action_dim // 2:action_dim] = expanded_state_mask[state_dim // 2:state_dim // 2 + action_dim // 2].clone()
    return padded_state, padded_mask


class MLPProjector(nn.Module):
    def __init__(self, in_dim, hidden_size):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden_size), nn.GELU(), nn.Linear(hidden_size, hidden_size))

    def forward(self, x):
        return self.mlp(x)


class VITRA(nn.Module):  # stands in for VITRA_Paligemma
    def __init__(self, hidden_size=64, unified_state_dim=212, unified_action_dim=192, chunk_size=16):
        super().__init__()
        self.chunk_size = chunk_size
        self.unified_action_dim = unified_action_dim
        self.vision_language = nn.Linear(3 * 8 * 8, hidden_size)
        self.state_encoder = MLPProjector(unified_state_dim, hidden_size)
        self.fov_encoder = MLPProjector(2, hidden_size)
        self.action_head = nn.Linear(3 * hidden_size + unified_action_dim, unified_action_dim)

    @torch.no_grad()
    def predict_action(self, image, instruction, current_state, current_state_mask, action_mask_torch,
                       num_ddim_steps=10, cfg_scale=5.0, fov=None, sample_times=1):
        device = next(self.parameters()).device
        pixels = torch.as_tensor(image[::28, ::28], dtype=torch.float32, device=device).reshape(1, -1) / 255.0
        vl_embeds = self.vision_language(pixels)
        state_embeds = self.state_encoder(current_state.to(device) * current_state_mask.to(device))
        fov_embeds = self.fov_encoder(fov.to(device))
        cond = torch.cat([vl_embeds, state_embeds, fov_embeds], dim=-1)
        actions = torch.randn(1, self.chunk_size, self.unified_action_dim, device=device)
        for _ in range(num_ddim_steps):
            inp = torch.cat([cond.unsqueeze(1).expand(-1, self.chunk_size, -1), actions], dim=-1)
            actions = actions - 0.1 * self.action_head(inp)
        return actions * action_mask_torch.to(device)


model = VITRA()  # load_model(configs).cuda()
model.eval()
normalizer = Normalizer()

image = (np.random.rand(224, 224, 3) * 255).astype(np.uint8)  # resize_short_side_to_target(Image.open(..), 224)
fov = torch.tensor([[np.deg2rad(60.0), np.deg2rad(60.0)]])      # input your camera FOV here [fov_x, fov_y]
instruction = "Left hand: None. Right hand: Pick up the phone on the table."

state = np.zeros((normalizer.state_mean.shape[0],))             # Input your hand state here
state_mask = np.array([False, True], dtype=bool)
action_mask = np.tile(np.array([[False, True]], dtype=bool), (model.chunk_size, 1))

norm_state = normalizer.normalize_state(state)
unified_action_dim, unified_state_dim = 192, 212
unified_state, unified_state_mask = pad_state_human(
    state=norm_state, state_mask=state_mask, action_dim=normalizer.action_mean.shape[0],
    state_dim=normalizer.state_mean.shape[0], unified_state_dim=unified_state_dim)
unified_action_mask = torch.tensor(action_mask).repeat_interleave(unified_action_dim // 2, dim=1)

norm_action = model.predict_action(
    image=image,
    instruction=instruction,
    current_state=unified_state.unsqueeze(0),
    current_state_mask=unified_state_mask.unsqueeze(0),
    action_mask_torch=unified_action_mask.unsqueeze(0),
    num_ddim_steps=10,
    cfg_scale=5.0,
    fov=fov,
    sample_times=1,
)
norm_action = norm_action[0, :, :102]
unnorm_action = normalizer.unnormalize_action(norm_action.numpy())
print("Predicted Action:", unnorm_action.shape, float(np.abs(unnorm_action).mean()))
