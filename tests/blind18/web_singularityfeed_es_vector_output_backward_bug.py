# Source: https://singularityfeed.com/cap-2-autograd-la-magia-detras-de-los-gradientes-en-pytorch-by-alejandro-d-arzola-saavedra-aug-2025
"""A Spanish autograd chapter (a repost of a Medium article): after a scalar `perdida = resultado ** 3` is
backwarded, the post applies the same affine function to a vector input, `salida_vector = peso *
entrada_vector + sesgo`, and calls `salida_vector.backward()` (the post wraps it in try/except to show the
error): torch raises "grad can be implicitly created only for scalar outputs". The post's fix: a non-scalar
output needs the gradient given explicitly, `salida_vector.backward(gradient=torch.ones_like(salida_vector))`.
"""
import torch

entrada = torch.tensor(5.0, requires_grad=True)
peso = torch.tensor(-2.0, requires_grad=True)
sesgo = torch.tensor(0.5, requires_grad=True)
resultado = peso * entrada + sesgo  # resultado = -2 * 5 + 0.5 = -9.5
perdida = resultado ** 3  # pérdida = (-9.5)^3 = -857.375 (escalar)
print(f"Gradientes antes de backward: entrada={entrada.grad}, peso={peso.grad}, sesgo={sesgo.grad}")
perdida.backward()  # Calcula gradientes automáticamente
print(f"Gradientes después de backward: entrada={entrada.grad}, peso={peso.grad}, sesgo={sesgo.grad}")

entrada_vector = torch.tensor([1.0, 3.0], requires_grad=True)
peso = torch.tensor(-2.0, requires_grad=True)
sesgo = torch.tensor(0.5, requires_grad=True)
salida_vector = peso * entrada_vector + sesgo  # tensor con dos valores
salida_vector.backward()  # expect: GG105
print(f"Gradientes del vector: entrada={entrada_vector.grad}, peso={peso.grad}, sesgo={sesgo.grad}")
