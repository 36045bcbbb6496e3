import assert from 'node:assert/strict'
import { cropFractions, displaySize, rtfPictures, wmfFile } from '../../src/word/rtf-pictures.js'
import { describe, test } from '../helpers/test.js'

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
const JPEG = Buffer.from('ffd8ffe000104a46494600010100', 'hex')
const EMF = Buffer.from('0100000084000000000000000000000020454d46', 'hex')
const WMF = Buffer.from('010009000003', 'hex')

/** Hex in lines of 64 digits, as Word writes it. */
const hex = (bytes: Buffer) => (bytes.toString('hex').match(/.{1,64}/g) ?? []).join('\r\n')

/** Word's pair for one picture: the PNG (or other) in `\shppict`, a WMF twin in `\nonshppict`. */
function wordPicture(
  blip: string,
  bytes: Buffer,
  props = '\\picw5292\\pich3969\\picwgoal3000\\pichgoal2250',
) {
  return (
    `{\\*\\shppict{\\pict{\\*\\picprop\\shplid1025{\\sp{\\sn shapeType}{\\sv 75}}}` +
    `\\picscalex100\\picscaley100\\piccropl0\\piccropr0\\piccropt0\\piccropb0${props}\\${blip}` +
    `\\bliptag-1{\\*\\blipuid 0123456789abcdef0123456789abcdef}\r\n${hex(bytes)}}}` +
    `{\\nonshppict{\\pict\\picscalex100\\picscaley100\\picw5292\\pich3969\\picwgoal3000\\pichgoal2250\\wmetafile8\r\n${hex(WMF)}}}`
  )
}

const doc = (body: string) =>
  `{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\froman Times New Roman;}}{\\*\\generator Word;}\\pard ${body}\\par}`

const bytesOf = (p: { bytes: Uint8Array } | undefined) => Buffer.from(p?.bytes ?? [])

describe('rtfPictures: the pictures of Word’s clipboard RTF', () => {
  test('a PNG, a JPEG, an EMF and a WMF come out in document order with their bytes', () => {
    const rtf = doc(
      `one ${wordPicture('pngblip', PNG)} two ${wordPicture('jpegblip', JPEG)} three ` +
        `${wordPicture('emfblip', EMF)} four {\\pict\\wmetafile8\\picw2540\\pich1270\\picwgoal1440\\pichgoal720 ${hex(WMF)}}`,
    )
    const pictures = rtfPictures(rtf)
    assert.deepEqual(
      pictures.map((p) => p.format),
      ['png', 'jpeg', 'emf', 'wmf'],
    )
    assert.ok(bytesOf(pictures[0]).equals(PNG))
    assert.ok(bytesOf(pictures[1]).equals(JPEG))
    assert.ok(bytesOf(pictures[2]).equals(EMF))
    assert.ok(bytesOf(pictures[3]).equals(WMF))
    assert.equal(pictures[3]?.mappingMode, 8)
    assert.deepEqual(
      [pictures[0]?.picw, pictures[0]?.pich, pictures[0]?.goalWidth, pictures[0]?.goalHeight],
      [5292, 3969, 3000, 2250],
    )
    assert.deepEqual(displaySize(pictures[0] as never), { width: 200, height: 150 })
  })

  test('each picture counts once: the shppict rendering is taken and its nonshppict twin skipped', () => {
    const pictures = rtfPictures(doc(wordPicture('pngblip', PNG) + wordPicture('pngblip', JPEG)))
    assert.equal(pictures.length, 2)
    assert.deepEqual(
      pictures.map((p) => p.format),
      ['png', 'png'],
    )
  })

  test('a shape’s picture counts once: its pib property is taken and the shprslt result skipped', () => {
    const shape =
      `{\\shp{\\*\\shpinst\\shpleft0\\shptop0{\\sp{\\sn shapeType}{\\sv 75}}` +
      `{\\sp{\\sn pib}{\\sv {\\pict\\picwgoal1500\\pichgoal1500\\pngblip ${hex(PNG)}}}}}` +
      `{\\shprslt\\par\\pard{\\pict\\picwgoal1500\\pichgoal1500\\wmetafile8 ${hex(WMF)}}\\par}}`
    const pictures = rtfPictures(doc(`before ${shape} after ${wordPicture('jpegblip', JPEG)}`))
    assert.deepEqual(
      pictures.map((p) => p.format),
      ['png', 'jpeg'],
    )
    assert.ok(bytesOf(pictures[0]).equals(PNG))
  })

  test('a cropped picture keeps its crop in twips; the fractions and the shown size follow from it', () => {
    const [p] = rtfPictures(
      doc(
        `{\\pict\\picscalex100\\picscaley100\\piccropl150\\piccropr450\\piccropt-90\\piccropb225` +
          `\\picw1411\\pich1058\\picwgoal1200\\pichgoal900\\pngblip ${hex(PNG)}}`,
      ),
    )
    assert.ok(p)
    assert.deepEqual(p.crop, { left: 150, right: 450, top: -90, bottom: 225 })
    assert.deepEqual(cropFractions(p), { left: 0.125, right: 0.375, top: 0, bottom: 0.25 })
    // (1200 − 150 − 450) / 15 = 40 px wide, (900 + 90 − 225) / 15 = 51 px high.
    assert.deepEqual(displaySize(p), { width: 40, height: 51 })
  })

  test('a scaled picture is shown at its goal size times the scale, and has nothing to crop', () => {
    const [p] = rtfPictures(
      doc(
        `{\\pict\\picscalex50\\picscaley25\\picw1058\\pich794\\picwgoal600\\pichgoal450\\jpegblip ${hex(JPEG)}}`,
      ),
    )
    assert.ok(p)
    assert.deepEqual([p.scaleX, p.scaleY], [50, 25])
    assert.deepEqual(displaySize(p), { width: 20, height: 8 })
    assert.equal(cropFractions(p), undefined)
  })

  test('\\bin data is read raw, braces and backslashes included', () => {
    const raw = Buffer.from([0x89, 0x7b, 0x7d, 0x5c, 0x00, 0x20, 0x0d, 0x0a, 0xff])
    const rtf = doc(
      `{\\pict\\pngblip\\picwgoal150\\pichgoal150\\bin${raw.length} ${raw.toString('latin1')}}` +
        wordPicture('jpegblip', JPEG),
    )
    const pictures = rtfPictures(rtf)
    assert.equal(pictures.length, 2)
    assert.ok(bytesOf(pictures[0]).equals(raw), bytesOf(pictures[0]).toString('hex'))
    assert.ok(bytesOf(pictures[1]).equals(JPEG))
  })

  test('\\bin inside a skipped group does not derail the reading of what follows', () => {
    const raw = Buffer.from('}}}{\\pict\\pngblip 00}', 'latin1')
    const rtf = doc(
      `{\\nonshppict{\\pict\\wmetafile8\\bin${raw.length} ${raw.toString('latin1')}}}` +
        wordPicture('pngblip', PNG),
    )
    const pictures = rtfPictures(rtf)
    assert.equal(pictures.length, 1)
    assert.ok(bytesOf(pictures[0]).equals(PNG))
  })

  test('nested groups inside a picture are not picture data, and unknown \\* destinations are skipped', () => {
    const rtf = doc(
      `{\\pict{\\*\\picprop{\\sp{\\sn fFlipH}{\\sv 0}}{\\sp{\\sn pictureGray}{\\sv ab}}}` +
        `\\pngblip{\\*\\blipuid ffffffffffffffffffffffffffffffff}${hex(PNG)}}` +
        `{\\*\\listpicture{\\pict\\pngblip ${hex(JPEG)}}}` +
        `{\\*\\unknownthing{\\pict\\pngblip ${hex(JPEG)}}}`,
    )
    const pictures = rtfPictures(rtf)
    assert.equal(pictures.length, 1)
    assert.ok(bytesOf(pictures[0]).equals(PNG))
  })

  test('an OLE object’s result picture counts, and pictures in any other format are kept as other', () => {
    const rtf = doc(
      `{\\object\\objemb{\\*\\objclass Equation.3}{\\*\\objdata 0102}{\\result{\\pict\\wmetafile8\\picw100\\pich50 ${hex(WMF)}}}}` +
        `{\\pict\\dibitmap0\\picw4\\pich4 00ff}`,
    )
    assert.deepEqual(
      rtfPictures(rtf).map((p) => p.format),
      ['wmf', 'other'],
    )
  })

  test('text that is not RTF, or a picture cut off before its end, gives no picture', () => {
    assert.deepEqual(rtfPictures('plain words, no braces'), [])
    assert.deepEqual(rtfPictures(''), [])
    assert.deepEqual(rtfPictures(`{\\rtf1{\\pict\\pngblip ${hex(PNG)}`), [])
  })
})

describe('wmfFile: a WMF file from an RTF \\wmetafile', () => {
  /** A standard WMF: SETWINDOWORG 0,0, SETWINDOWEXT 1440 × 720, EOF. */
  function standardWmf(): Buffer {
    const words = [5, 0, 0x020b, 0, 0, 5, 0, 0x020c, 720, 1440, 3, 0, 0]
    const body = Buffer.alloc(words.length * 2)
    for (const [i, w] of words.entries()) body.writeUInt16LE(w, i * 2)
    const header = Buffer.alloc(18)
    header.writeUInt16LE(1, 0)
    header.writeUInt16LE(9, 2)
    header.writeUInt16LE(0x300, 4)
    header.writeUInt32LE((18 + body.length) / 2, 6)
    return Buffer.concat([header, body])
  }

  test('gets a placeable header with the window’s bounds, its units per inch and a right checksum', () => {
    const wmf = standardWmf()
    const [p] = rtfPictures(
      `{\\pict\\wmetafile8\\picw2540\\pich1270\\picwgoal1440\\pichgoal720 ${hex(wmf)}}`,
    )
    assert.ok(p)
    const file = Buffer.from(wmfFile(p))
    assert.equal(file.readUInt32LE(0), 0x9ac6cdd7)
    assert.deepEqual(
      [file.readInt16LE(6), file.readInt16LE(8), file.readInt16LE(10), file.readInt16LE(12)],
      [0, 0, 1440, 720],
    )
    // 1440 units over 1440 twips: 1440 units per inch.
    assert.equal(file.readUInt16LE(14), 1440)
    let sum = 0
    for (let i = 0; i < 10; i++) sum ^= file.readUInt16LE(i * 2)
    assert.equal(file.readUInt16LE(20), sum)
    assert.ok(file.subarray(22).equals(wmf))
  })

  test('a half-size goal doubles the units per inch; bytes that already have the header are kept', () => {
    const wmf = standardWmf()
    const [half] = rtfPictures(`{\\pict\\wmetafile8\\picwgoal720\\pichgoal360 ${hex(wmf)}}`)
    assert.equal(Buffer.from(wmfFile(half as never)).readUInt16LE(14), 2880)
    const placeable = Buffer.from(wmfFile(half as never))
    const [again] = rtfPictures(`{\\pict\\wmetafile8 ${hex(placeable)}}`)
    assert.ok(Buffer.from(wmfFile(again as never)).equals(placeable))
  })
})
