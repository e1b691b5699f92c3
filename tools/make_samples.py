#!/usr/bin/env python
"""Make the small media files in `samples/` that the notebooks send to models: run `.venv/bin/python tools/make_samples.py`.

Everything is drawn or synthesised here (no downloads), deterministically, so re-running gives identical bytes:
- `puppy.jpg`: a 300x200 cartoon puppy drawn with Pillow
- `solveit.pdf`: a 1-page PDF whose text layer reads "Hi, I'm Jeremy Howard, from fast.ai." (written by hand)
- `alloy.wav`: 1 s of a 440 Hz tone, 8 kHz 16-bit mono
- `sample.mp3`: ~1 s of MPEG-1 Layer III silence (valid frames, all-zero side info)
- `clip.mp4`: a minimal ISO-BMFF file (`ftyp` + `moov`/`mvhd`), enough for MIME detection; it has no tracks"""
import math, struct, wave, zlib
from pathlib import Path
from PIL import Image, ImageDraw

SAMPLES = Path(__file__).resolve().parent.parent/'samples'

# ---- puppy.jpg
def _ellipse(d, cx, cy, rx, ry, **kw): d.ellipse([cx-rx, cy-ry, cx+rx, cy+ry], **kw)

def draw_puppy(w=300, h=200):
    "A cartoon puppy on grass: floppy ears, muzzle, tongue, collar"
    im = Image.new('RGB', (w, h), (150, 205, 240))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 150, w, h], fill=(110, 180, 90))                     # grass
    _ellipse(d, 250, 38, 22, 22, fill=(255, 220, 80))                    # sun
    fur, dark, ol = (196, 140, 80), (120, 75, 40), (60, 35, 20)
    _ellipse(d, 150, 160, 62, 38, fill=fur, outline=ol, width=2)         # body
    for x in (112, 188): _ellipse(d, x, 190, 16, 10, fill=fur, outline=ol, width=2)  # front paws
    d.line([(208, 150), (240, 118)], fill=ol, width=9)                   # tail
    d.line([(208, 150), (240, 118)], fill=fur, width=5)
    for x in (96, 204): _ellipse(d, x, 92, 20, 42, fill=dark, outline=ol, width=2)   # floppy ears
    _ellipse(d, 150, 88, 52, 48, fill=fur, outline=ol, width=2)          # head
    _ellipse(d, 168, 70, 16, 13, fill=(225, 185, 130))                   # eye patch
    for x in (132, 168):                                                 # eyes with highlights
        _ellipse(d, x, 74, 8, 9, fill=(25, 20, 15))
        _ellipse(d, x+3, 71, 2.5, 2.5, fill='white')
    _ellipse(d, 150, 108, 26, 19, fill=(240, 215, 175), outline=ol, width=1)  # muzzle
    _ellipse(d, 150, 98, 9, 6, fill=(30, 20, 15))                         # nose
    d.line([(150, 104), (150, 112)], fill=ol, width=2)                    # mouth
    d.arc([136, 102, 150, 118], 20, 160, fill=ol, width=2)
    d.arc([150, 102, 164, 118], 20, 160, fill=ol, width=2)
    _ellipse(d, 150, 121, 6, 7, fill=(230, 90, 110))                      # tongue
    d.arc([110, 122, 190, 146], 20, 160, fill=(200, 40, 40), width=6)     # collar
    _ellipse(d, 150, 146, 5, 5, fill=(250, 200, 40), outline=ol)          # tag
    return im

def make_jpg(fn):
    # Pillow's default quality and no EXIF/dpi, so the JPEG header (shown in the notebooks' outputs) stays the same
    draw_puppy().save(fn, 'JPEG')

# ---- solveit.pdf
def _pdf(objs):
    "Serialise numbered PDF objects (1..n; object 1 is the catalog) with a correct xref table"
    out, offs = bytearray(b'%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'), []
    for i,o in enumerate(objs, 1):
        offs.append(len(out))
        out += f'{i} 0 obj\n'.encode() + o + b'\nendobj\n'
    xref = len(out)
    out += f'xref\n0 {len(objs)+1}\n0000000000 65535 f \n'.encode()
    out += b''.join(f'{o:010d} 00000 n \n'.encode() for o in offs)
    out += f'trailer\n<< /Size {len(objs)+1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n'.encode()
    return bytes(out)

def _stream(data, compress=True):
    if compress: return b'<< /Length %d /Filter /FlateDecode >>\nstream\n' % len(z := zlib.compress(data, 9)) + z + b'\nendstream'
    return b'<< /Length %d >>\nstream\n' % len(data) + data + b'\nendstream'

def _pdf_str(s): return '(' + s.replace('\\', '\\\\').replace('(', '\\(').replace(')', '\\)') + ')'

def make_pdf(fn, text="Hi, I'm Jeremy Howard, from fast.ai."):
    # Real text (standard Helvetica, no embedding needed) so models and pdftotext can read it, on a US-letter page
    content = '\n'.join([
        '0.2 0.4 0.7 rg 72 700 468 4 re f',                      # a blue rule under the heading
        'BT /F2 28 Tf 0.1 0.1 0.1 rg 72 716 Td (SolveIt) Tj ET',
        f'BT /F1 16 Tf 0.1 0.1 0.1 rg 72 660 Td {_pdf_str(text)} Tj ET',
        f'BT /F1 11 Tf 0.4 0.4 0.4 rg 72 636 Td {_pdf_str("A one-page sample document for lisette notebooks.")} Tj ET',
    ]).encode()
    font = lambda nm: f'<< /Type /Font /Subtype /Type1 /BaseFont /{nm} /Encoding /WinAnsiEncoding >>'.encode()
    objs = [b'<< /Type /Catalog /Pages 2 0 R >>',
            b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
            b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R '
            b'/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>',
            _stream(content), font('Helvetica'), font('Helvetica-Bold'),
            b'<< /Title (SolveIt) /Author (Jeremy Howard) >>']
    pdf = _pdf(objs)
    # Point the trailer at the Info dictionary (object 7) too
    pdf = pdf.replace(b'/Root 1 0 R >>', b'/Root 1 0 R /Info 7 0 R >>')
    fn.write_bytes(pdf)

# ---- alloy.wav
def make_wav(fn, secs=1.0, rate=8000, freq=440.0):
    # 8 kHz 16-bit mono keeps it ~16 KB; a short fade avoids clicks at the ends
    n = int(secs*rate)
    def amp(i): return min(1, i/400, (n-i)/400) * 0.4 * math.sin(2*math.pi*freq*i/rate)
    with wave.open(str(fn), 'wb') as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(rate)
        w.writeframes(b''.join(struct.pack('<h', round(32767*amp(i))) for i in range(n)))

# ---- sample.mp3
def make_mp3(fn, secs=1.0):
    # MPEG-1 Layer III, 32 kbps, 44.1 kHz, mono, no CRC: header FF FB 10 C0; frame = 144*32000/44100 = 104 bytes.
    # All-zero side info means part2_3_length=0 in every granule, which decoders play as silence.
    hdr, size = bytes([0xFF, 0xFB, 0x10, 0xC0]), 144*32000//44100
    nframes = math.ceil(secs*44100/1152)
    fn.write_bytes((hdr + bytes(size-len(hdr)))*nframes)

# ---- clip.mp4
def _box(typ, *parts): return struct.pack('>I4s', 8+sum(map(len, parts)), typ) + b''.join(parts)

def make_mp4(fn):
    "`ftyp` (isom) + `moov` holding a version-0 `mvhd` (1000 units/s, zero duration, identity matrix)"
    ftyp = _box(b'ftyp', b'isom', struct.pack('>I', 512), b'isomiso2mp41')
    matrix = struct.pack('>9I', 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    mvhd = _box(b'mvhd', struct.pack('>B3xIIII', 0, 0, 0, 1000, 0), struct.pack('>IH10x', 0x10000, 0x100),
                matrix, bytes(24), struct.pack('>I', 1))
    fn.write_bytes(ftyp + _box(b'moov', mvhd))

MAKERS = {'puppy.jpg': make_jpg, 'solveit.pdf': make_pdf, 'alloy.wav': make_wav, 'sample.mp3': make_mp3, 'clip.mp4': make_mp4}

def main():
    SAMPLES.mkdir(exist_ok=True)
    for nm,f in MAKERS.items():
        f(SAMPLES/nm)
        sz = (SAMPLES/nm).stat().st_size
        assert sz < 60_000, f'{nm} is {sz} bytes: keep samples small'
        print(f'samples/{nm}: {sz:,} bytes')

if __name__ == '__main__': main()
