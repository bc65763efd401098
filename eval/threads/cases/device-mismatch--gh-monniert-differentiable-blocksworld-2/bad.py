# Differentiable Blocks World: a scene is a ground plane plus n_blocks superquadric-like blocks,
# each a small mesh with BNF faces, a learned pose and a learned opacity. To visualize the
# decomposition, every face gets a value (0 for the ground, i/n for block i) weighted by its
# block's opacity, and the values are rendered as a label image. The model lives on the GPU
# (the meta device stands in for it); a fixed face count stands in for the meshes and a linear
# projection of face values stands in for the renderer.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda")


class DifferentiableBlocksWorld(nn.Module):
    def __init__(self, n_blocks=4, block_faces=12, ground_faces=2, img_size=8):
        super().__init__()
        self.n_blocks = n_blocks
        self.BNF = block_faces
        self.ground_faces = ground_faces
        self.bkg = nn.Parameter(torch.rand(3))
        self.R_6d = nn.Parameter(torch.randn(n_blocks, 6) * 0.1)
        self.T = nn.Parameter(torch.randn(n_blocks, 3) * 0.1)
        self.alpha_logit = nn.Parameter(torch.zeros(n_blocks))
        n_faces = ground_faces + n_blocks * block_faces
        self.register_buffer("face_to_pixel", torch.rand(n_faces, img_size * img_size))

    def get_opacities(self):
        return torch.sigmoid(self.alpha_logit)

    def get_face_opacities(self):
        ground = torch.ones(self.ground_faces, device=self.bkg.device)
        return torch.cat([ground, self.get_opacities().repeat_interleave(self.BNF)])

    def get_block_labels(self):
        NFE = self.ground_faces
        val_blocks = torch.linspace(0, 1, self.n_blocks + 1)[1:]
        values = torch.cat([torch.zeros(NFE), val_blocks.repeat_interleave(self.BNF)])
        return values * self.get_face_opacities()

    def render_labels(self):
        return self.get_block_labels() @ self.face_to_pixel


model = DifferentiableBlocksWorld().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
target = torch.rand(64, device=device)
loss = (model.render_labels() - target).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
labels = model.render_labels().detach()
print(f"label image {tuple(labels.shape)} on {labels.device.type}")
