# Source: https://github.com/replicate/cog/issues/1681
"""A cog predictor whose prediction runs an optimisation, as the reporter describes: setup()
builds the model, and predict() fits a latent code to the request's target with Adam, calling
loss.backward() each step. The reporter had left the @torch.inference_mode() decorator over
predict(), so nothing inside records a graph and the first backward raises "element 0 of tensors
does not require grad and does not have a grad_fn" (the loss.requires_grad_(True) he then tried
silences it but leaves the gradients None). cog's BasePredictor / Input and its runner are small
stand-ins; the decoder is a small MLP and the target random."""
import torch
import torch.nn as nn


class BasePredictor:
    def setup(self):
        pass


def Input(description="", default=None):
    return default


class Decoder(nn.Module):
    def __init__(self, latent_dim=8, out_dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 64), nn.ReLU(), nn.Linear(64, out_dim))

    def forward(self, z):
        return self.net(z)


class Predictor(BasePredictor):
    def setup(self):
        """Load the model into memory to make running multiple predictions efficient"""
        self.model = Decoder()
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)

    @torch.inference_mode()
    def predict(self, target: torch.Tensor = Input(description="signal to fit"),
                steps: int = Input(description="optimisation steps", default=5)) -> torch.Tensor:
        z = torch.zeros(1, 8, requires_grad=True)
        optimizer = torch.optim.Adam([z], lr=0.1)
        for step in range(steps):
            optimizer.zero_grad()
            loss = ((self.model(z) - target) ** 2).mean()
            loss.backward()  # expect: GG104
            optimizer.step()
            print(step, loss.item())
        return self.model(z)


def run_prediction(predictor, **inputs):
    """What cog's HTTP runner does with a request: setup once, then predict(**inputs)."""
    predictor.setup()
    return predictor.predict(**inputs)


out = run_prediction(Predictor(), target=torch.randn(1, 32), steps=5)
print(out.shape)
