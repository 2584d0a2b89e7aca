"""The ImageNet-style training input pipeline: JPEG records decoded, randomly cropped, resized to
224x224, mirrored at random and normalized, against the same steps with PIL and numpy as a
PyTorch DataLoader (num_workers=0) would run them without torchvision.

Data: 256 smooth random 375x500 RGB JPEGs (quality 90) in one OFRecord part file. OneFlow:
flow.data.OFRecordImageDecoderRandomCrop -> flow.image.Resize(target_size=(224, 224)) ->
flow.image.CropMirrorNormalize(mirror_blob=flow.random.CoinFlip(...)), the pipeline of
OneFlow-Benchmark's ofrecord_util.py, in a predict job returning the batch mean. PIL: decode,
the same random crop window rule, bilinear resize, flip, (x - mean) / std into a torch tensor.
Prints one JSON line per batch size:
    {"case": "imagenet_pipeline_b32", "oneflow_ms_per_batch": ..., "pil_ms_per_batch": ...}
Run: .venv/bin/python benchmarks/image_pipeline_benchmark.py [--iterations 10]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import io
import json
import os
import tempfile

import numpy as np

import side_by_side

RECORDS, HEIGHT, WIDTH = 256, 375, 500
MEAN, STD = [123.68, 116.779, 103.939], [58.393, 57.12, 57.375]


def write_dataset(directory):
    from PIL import Image

    from oneflow.core.record import record_pb2
    from oneflow.framework.ofrecord_reader import write_part

    rng = np.random.RandomState(0)
    encoded = []
    for _ in range(RECORDS):
        coarse = rng.randint(0, 256, size=(HEIGHT // 25, WIDTH // 25, 3)).astype(np.uint8)
        image = Image.fromarray(coarse).resize((WIDTH, HEIGHT), Image.BILINEAR)
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=90)
        encoded.append(buffer.getvalue())
    records = [record_pb2.OFRecord(feature={
        "encoded": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[data])),
        "class/label": record_pb2.Feature(int32_list=record_pb2.Int32List(value=[i % 1000])),
    }) for i, data in enumerate(encoded)]
    write_part(os.path.join(directory, "part-0"), records)
    return encoded


def oneflow_ms(directory, batch, warmup, iterations):
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()

    @flow.global_function(type="predict")
    def pipeline() -> tp.Numpy:
        records = flow.data.ofrecord_reader(directory, batch_size=batch, random_shuffle=True)
        image = flow.data.OFRecordImageDecoderRandomCrop(records, "encoded", color_space="RGB")
        image = flow.image.Resize(image, target_size=[224, 224])[0]
        mirror = flow.random.CoinFlip(batch_size=batch)
        normal = flow.image.CropMirrorNormalize(image, mirror_blob=mirror, color_space="RGB",
                                                mean=MEAN, std=STD, output_dtype=flow.float)
        return flow.math.reduce_mean(normal)

    return side_by_side.seconds_per_call(pipeline, warmup, iterations) * 1e3


def pil_ms(encoded, batch, warmup, iterations):
    import torch
    from PIL import Image

    from oneflow.framework.image_pipeline import random_crop_windows

    rng = np.random.default_rng(0)
    mean, scale = np.array(MEAN, np.float32), 1.0 / np.array(STD, np.float32)
    position = [0]

    def step():
        out = np.empty((batch, 3, 224, 224), np.float32)
        for i in range(batch):
            data = encoded[position[0] % len(encoded)]
            position[0] += 1
            image = Image.open(io.BytesIO(data)).convert("RGB")
            [(y, x, h, w)] = random_crop_windows([(image.height, image.width)], (0.08, 1.0),
                                                 (0.75, 1.333333), 10,
                                                 [int(rng.integers(0, 2 ** 63))])
            image = image.resize((224, 224), Image.BILINEAR, box=(x, y, x + w, y + h))
            if rng.random() < 0.5:
                image = image.transpose(Image.FLIP_LEFT_RIGHT)
            out[i] = ((np.asarray(image, np.float32) - mean) * scale).transpose(2, 0, 1)
        torch.from_numpy(out).mean().item()

    return side_by_side.seconds_per_call(step, warmup, iterations) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch", type=int, nargs="+", default=[32])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        encoded = write_dataset(directory)
        for batch in args.batch:
            ours = oneflow_ms(directory, batch, args.warmup, args.iterations)
            theirs = pil_ms(encoded, batch, args.warmup, args.iterations)
            print(json.dumps({"case": "imagenet_pipeline_b%d" % batch,
                              "oneflow_ms_per_batch": round(ours, 2),
                              "pil_ms_per_batch": round(theirs, 2)}))


if __name__ == "__main__":
    main()
