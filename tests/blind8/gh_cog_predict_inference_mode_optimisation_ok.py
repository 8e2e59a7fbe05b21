# Source: https://github.com/replicate/cog/issues/1681
"""The cog predictor with the reporter's fix: the @torch.inference_mode() decorator over
predict() is removed, so the optimisation inside it records its graph and loss.backward()
reaches the latent code; the final decoding runs under torch.no_grad()."""
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

    def predict(self, target: torch.Tensor = Input(description="signal to fit"),
                steps: int = Input(description="optimisation steps", default=5)) -> torch.Tensor:
        z = torch.zeros(1, 8, requires_grad=True)
        optimizer = torch.optim.Adam([z], lr=0.1)
        for step in range(steps):
            optimizer.zero_grad()
            loss = ((self.model(z) - target) ** 2).mean()
            loss.backward()
            optimizer.step()
            print(step, loss.item())
        with torch.no_grad():
            return self.model(z)


def run_prediction(predictor, **inputs):
    """What cog's HTTP runner does with a request: setup once, then predict(**inputs)."""
    predictor.setup()
    return predictor.predict(**inputs)


out = run_prediction(Predictor(), target=torch.randn(1, 32), steps=5)
print(out.shape)
