"""oneflow.train: OneFlow 0.3's legacy CheckPoint, as 0.3 runs it by default (legacy model IO
off): variables initialise when the session starts, so init() does nothing, and save/load are
flow.checkpoint.save(path) and flow.load_variables(flow.checkpoint.get(path))."""


class CheckPoint:
    def init(self):
        pass

    def save(self, path):
        from oneflow import checkpoint

        checkpoint.save(path)

    def load(self, path):
        from oneflow import checkpoint

        checkpoint.load_variables(checkpoint.get(path))
