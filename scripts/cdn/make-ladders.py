"""Turns scikit-image's sample photographs into the ladders the CDN benchmarks serve.

Usage: make-ladders.py SKIMAGE_DATA_DIR OUT_DIR

For each photo: a 4000x3000 original (centre crop to 4:3, Lanczos enlargement) and one JPEG per
width of WIDTHS (quality 80, 4:2:0, optimised), each resized from the original with Lanczos.
Writes OUT_DIR/NAME/WIDTH.jpg and OUT_DIR/manifest.json.
"""
import json
import os
import sys

from PIL import Image

PHOTOS = ["astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "hubble_deep_field.jpg",
          "motorcycle_left.png", "retina.jpg"]
WIDTHS = [160, 240, 320, 400, 480, 640, 800, 960, 1080, 1280, 1600, 2048, 2560, 3200, 4000]
ORIGINAL = (4000, 3000)
QUALITY = 80


def crop_to_four_by_three(image):
    width, height = image.size
    if width * 3 > height * 4:
        target = height * 4 // 3
        left = (width - target) // 2
        return image.crop((left, 0, left + target, height))
    target = width * 3 // 4
    top = (height - target) // 2
    return image.crop((0, top, width, top + target))


def main():
    data, out = sys.argv[1], sys.argv[2]
    manifest = {"quality": QUALITY, "original": list(ORIGINAL), "widths": WIDTHS, "photos": []}
    for file in PHOTOS:
        name = os.path.splitext(file)[0]
        with Image.open(os.path.join(data, file)) as source:
            sample = source.convert("RGB")
        original = crop_to_four_by_three(sample).resize(ORIGINAL, Image.LANCZOS)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        sizes = {}
        for width in WIDTHS:
            height = width * 3 // 4
            rung = original if width == ORIGINAL[0] else original.resize((width, height), Image.LANCZOS)
            path = os.path.join(folder, f"{width}.jpg")
            rung.save(path, "JPEG", quality=QUALITY, optimize=True, subsampling=2)
            sizes[str(width)] = os.path.getsize(path)
        manifest["photos"].append({"name": name, "sample": list(sample.size), "bytes": sizes})
        print(f"[cdn-photos] {name}: sample {sample.size[0]}x{sample.size[1]}, "
              f"160 px {sizes['160']} B, 480 px {sizes['480']} B, 4000 px {sizes['4000']} B")
    with open(os.path.join(out, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1)


if __name__ == "__main__":
    main()
