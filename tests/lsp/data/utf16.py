import torch

权重 = torch.randn(3, requires_grad=True)
损失 = torch.exp(权重).sum()
损失.backward()
标签 = "🔥🔥"; 损失.backward()
