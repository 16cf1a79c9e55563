"""Train a one-feature logistic model on synthetic data and save it."""
import json
import math
import os
import random


def main():
    rate = float(os.environ.get("LEARNING_RATE", "0.01"))
    random.seed(0)
    data = [(x, 1 if x + random.gauss(0, 0.5) > 0 else 0)
            for x in (random.uniform(-3, 3) for _ in range(500))]
    w = b = 0.0
    for _ in range(200):
        for x, y in data:
            p = 1 / (1 + math.exp(-(w * x + b)))
            w -= rate * (p - y) * x
            b -= rate * (p - y)
    out = os.environ.get("MODEL_DIR", "model")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.json"), "w") as f:
        json.dump({"w": w, "b": b}, f)
    print(f"trained: w={w:.3f} b={b:.3f}")


if __name__ == "__main__":
    main()
