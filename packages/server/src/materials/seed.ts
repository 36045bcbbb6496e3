import { createHash } from 'node:crypto'
import type { MaterialRepository } from '../db/material-repo.js'
import type { ImportSummary } from './transfer.js'

/**
 * Demo materials for a fresh install, written for this project: typesetting blocks in the
 * style of WeChat article editors (titles, quotes, cards, dividers, endings), in Chinese and
 * English, on inline styles only. Already in the sanitiser's output form (a test checks that
 * cleaning them changes nothing), so an import stores them as they are.
 */
export const DEMO_MATERIALS = {
  version: 1,
  categories: [
    { id: 1, name: '标题 Titles', parentId: null, order: 1 },
    { id: 2, name: '正文 Body', parentId: null, order: 2 },
    { id: 3, name: '装饰 Decoration', parentId: null, order: 3 },
    { id: 11, name: '序号标题 Numbered', parentId: 1, order: 1 },
    { id: 12, name: '简约标题 Simple', parentId: 1, order: 2 },
    { id: 21, name: '引用 Quotes', parentId: 2, order: 1 },
    { id: 22, name: '卡片 Cards', parentId: 2, order: 2 },
    { id: 31, name: '分割线 Dividers', parentId: 3, order: 1 },
    { id: 32, name: '结尾 Endings', parentId: 3, order: 2 },
  ],
  materials: [
    {
      id: 1,
      name: '序号标题 · 01 开篇',
      categoryId: 11,
      tags: ['标题', '序号', 'title'],
      content:
        '<section style="margin:20px 0;text-align:left"><section style="display:inline-block;border-bottom:2px solid #2f7cf6;padding:0 4px 4px"><span style="font-size:28px;font-weight:bold;color:#2f7cf6;font-family:Georgia, serif">01</span><span style="font-size:17px;font-weight:bold;color:#333;margin-left:10px;letter-spacing:1px">开篇：为什么要写这篇文章</span></section></section>',
    },
    {
      id: 2,
      name: 'Numbered title · Part 02',
      categoryId: 11,
      tags: ['title', 'numbered'],
      content:
        '<section style="margin:24px 0"><p style="margin:0;font-size:12px;letter-spacing:3px;color:#999;text-transform:uppercase">Part 02</p><p style="margin:4px 0 0;font-size:20px;font-weight:bold;color:#222;border-left:4px solid #f5a623;padding-left:10px">Getting started</p></section>',
    },
    {
      id: 3,
      name: '居中标题 · 本期导读',
      categoryId: 12,
      tags: ['标题', '居中', '导读'],
      content:
        '<section style="margin:24px 0;text-align:center"><p style="margin:0;font-size:18px;font-weight:bold;color:#333;letter-spacing:2px">本期导读</p><section style="width:40px;height:3px;margin:8px auto 0;background-color:#e64340;border-radius:2px"></section></section>',
    },
    {
      id: 4,
      name: 'Left-bar title · Key takeaways',
      categoryId: 12,
      tags: ['title', 'summary'],
      content:
        '<section style="margin:20px 0;padding:6px 12px;background-color:#f3f7ff;border-left:5px solid #2f7cf6"><p style="margin:0;font-size:17px;font-weight:bold;color:#1d4fa8">Key takeaways</p></section>',
    },
    {
      id: 5,
      name: '引用框 · 名言',
      categoryId: 21,
      tags: ['引用', '名言', 'quote'],
      content:
        '<section style="margin:20px 0;padding:16px 20px;background-color:#fafafa;border-radius:8px;border:1px solid #eee"><p style="margin:0;font-size:32px;line-height:1;color:#ddd;font-family:Georgia, serif">“</p><p style="margin:0;font-size:15px;line-height:1.8;color:#555">读书不是为了雄辩和驳斥，也不是为了轻信和盲从，而是为了思考和权衡。</p><p style="margin:8px 0 0;text-align:right;font-size:13px;color:#999">—— 弗朗西斯·培根</p></section>',
    },
    {
      id: 6,
      name: 'Quote box · Pull quote',
      categoryId: 21,
      tags: ['quote', 'pull quote'],
      content:
        '<blockquote style="margin:20px 0;padding:12px 16px;border-left:4px solid #07c160;background-color:#f2fbf6;color:#333"><p style="margin:0;font-size:16px;line-height:1.7;font-style:italic">Simplicity is prerequisite for reliability.</p><p style="margin:6px 0 0;font-size:13px;color:#888">— Edsger W. Dijkstra</p></blockquote>',
    },
    {
      id: 7,
      name: '提示卡片 · 小贴士',
      categoryId: 22,
      tags: ['卡片', '提示', 'tip'],
      content:
        '<section style="margin:20px 0;padding:14px 16px;background-color:#fff8e6;border-radius:10px;box-shadow:0 2px 8px rgba(0, 0, 0, 0.06)"><p style="margin:0 0 6px;font-size:15px;font-weight:bold;color:#d48806">💡 小贴士</p><p style="margin:0;font-size:14px;line-height:1.8;color:#614700">长按图片可以保存到手机相册；点击右上角“…”可以把文章分享给朋友。</p></section>',
    },
    {
      id: 8,
      name: 'Summary card · Three points',
      categoryId: 22,
      tags: ['card', 'summary', 'list'],
      content:
        '<section style="margin:20px 0;padding:16px 18px;border:1px solid #d6e4ff;border-radius:10px;background-color:#ffffff"><p style="margin:0 0 8px;font-size:16px;font-weight:bold;color:#1d39c4">Summary</p><ol style="margin:0;padding-left:20px;font-size:14px;line-height:1.9;color:#333"><li>Start with the reader’s question.</li><li>Show one example before the rule.</li><li>End with a single next step.</li></ol></section>',
    },
    {
      id: 9,
      name: '作者卡片 · 编辑署名',
      categoryId: 22,
      tags: ['卡片', '作者', '署名'],
      content:
        '<section style="margin:24px 0;padding:12px 16px;background-color:#f7f7f7;border-radius:8px;font-size:13px;line-height:1.8;color:#666"><p style="margin:0">文字：林小雨　｜　排版：周一</p><p style="margin:0">图片：编辑部　｜　审核：陈晨</p></section>',
    },
    {
      id: 10,
      name: '分割线 · 三点',
      categoryId: 31,
      tags: ['分割线', 'divider'],
      content:
        '<section style="margin:28px 0;text-align:center;font-size:20px;letter-spacing:12px;color:#c0c0c0">· · ·</section>',
    },
    {
      id: 11,
      name: 'Divider · Gradient line',
      categoryId: 31,
      tags: ['divider', 'gradient'],
      content:
        '<section style="margin:28px auto;width:80%;height:2px;background-image:linear-gradient(90deg, #ffffff, #2f7cf6, #ffffff)"></section>',
    },
    {
      id: 12,
      name: '结尾 · 感谢阅读',
      categoryId: 32,
      tags: ['结尾', '关注', 'ending'],
      content:
        '<section style="margin:32px 0 16px;text-align:center"><p style="margin:0;font-size:15px;font-weight:bold;color:#333;letter-spacing:2px">感谢阅读</p><p style="margin:6px 0 0;font-size:13px;color:#999">如果觉得有用，欢迎点赞、在看、转发给需要的朋友</p></section>',
    },
    {
      id: 13,
      name: 'Ending · See you next week',
      categoryId: 32,
      tags: ['ending', 'newsletter'],
      content:
        '<section style="margin:32px 0 16px;padding:18px;text-align:center;background-color:#1f2d3d;border-radius:12px"><p style="margin:0;font-size:16px;font-weight:bold;color:#ffffff">Thanks for reading</p><p style="margin:6px 0 0;font-size:13px;color:#a9b7c6">A new issue every Friday. Reply to this article to tell us what to cover next.</p></section>',
    },
  ],
} as const

/** What the rows saved from the demo materials (db/sqlite-demo.generated.ts) are checked against. */
export function demoDigest(): string {
  return createHash('sha256').update(JSON.stringify(DEMO_MATERIALS)).digest('hex')
}

/**
 * Stores the demo materials in an empty library. On SQLite they are written from the rows
 * importing them writes, saved with the code by `npm run save-sqlite-schema`: a first start
 * spent about 25 ms validating them and building the import's statements, the saved rows take
 * about 5 ms. Elsewhere, or when the saved rows are not those of these materials, they are
 * imported.
 */
export async function seedDemoMaterials(repo: MaterialRepository): Promise<ImportSummary> {
  const restored = await repo.restoreDemo(demoDigest())
  if (restored)
    return {
      categories: { created: restored.categories, updated: 0, unchanged: 0 },
      materials: { created: restored.materials, updated: 0, unchanged: 0 },
    }
  const { importMaterials } = await import('./transfer.js')
  // Already clean, so a first start does not load the sanitiser for them.
  return importMaterials(repo, DEMO_MATERIALS, { alreadyClean: true })
}
