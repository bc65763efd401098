# ComfyUI post-processing nodes (comfy_extras/nodes_post_processing.py): the Sharpen node applied to
# an image that a workflow produced in half precision (fp16 intermediates). A small stand-in for
# comfy.model_management picks the devices; a random fp16 image stands in for the decoded one.
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class model_management:
    @staticmethod
    def get_torch_device():
        return torch.device("cpu")

    @staticmethod
    def intermediate_device():
        return torch.device("cpu")


def gaussian_kernel(kernel_size: int, sigma: float, device=None):
    x, y = torch.meshgrid(torch.linspace(-1, 1, kernel_size, device=device), torch.linspace(-1, 1, kernel_size, device=device), indexing="ij")
    d = torch.sqrt(x * x + y * y)
    g = torch.exp(-(d * d) / (2.0 * sigma * sigma))
    return g / g.sum()


class Sharpen:
    def __init__(self):
        pass

    @classmethod
    def INPUT_TYPES(s):
        return {
            "required": {
                "image": ("IMAGE",),
                "sharpen_radius": ("INT", {"default": 1, "min": 1, "max": 31, "step": 1}),
                "sigma": ("FLOAT", {"default": 1.0, "min": 0.1, "max": 10.0, "step": 0.01}),
                "alpha": ("FLOAT", {"default": 1.0, "min": 0.0, "max": 5.0, "step": 0.01}),
            },
        }

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "sharpen"

    CATEGORY = "image/postprocessing"

    def sharpen(self, image: torch.Tensor, sharpen_radius: int, sigma: float, alpha: float):
        if sharpen_radius == 0:
            return (image,)

        batch_size, height, width, channels = image.shape
        image = image.to(model_management.get_torch_device())

        kernel_size = sharpen_radius * 2 + 1
        kernel = gaussian_kernel(kernel_size, sigma, device=image.device) * -(alpha*10)
        kernel = kernel.to(dtype=image.dtype)
        center = kernel_size // 2
        kernel[center, center] = kernel[center, center] - kernel.sum() + 1.0
        kernel = kernel.repeat(channels, 1, 1).unsqueeze(1)

        tensor_image = image.permute(0, 3, 1, 2)  # Torch wants (B, C, H, W) we use (B, H, W, C)
        tensor_image = F.pad(tensor_image, (sharpen_radius, sharpen_radius, sharpen_radius, sharpen_radius), 'reflect')
        sharpened = F.conv2d(tensor_image, kernel, padding=center, groups=channels)[:, :, sharpen_radius:-sharpen_radius, sharpen_radius:-sharpen_radius]
        sharpened = sharpened.permute(0, 2, 3, 1)

        result = torch.clamp(sharpened, 0, 1)

        return (result.to(model_management.intermediate_device()),)


# the decoded image arrives from the previous node in fp16 (B, H, W, C)
decoded = torch.rand(1, 32, 32, 3).to(torch.float16)
node = Sharpen()
(sharpened,) = getattr(node, node.FUNCTION)(decoded, sharpen_radius=2, sigma=1.0, alpha=0.5)
print(sharpened.shape, sharpened.dtype, round(float(sharpened.float().mean()), 4))
