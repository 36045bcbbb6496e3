/**
 * The UEditor keys we serve from `action=config`, with their defaults. Names are the editor's own
 * spelling. The documented UEditor defaults are used where there are any (docs/protocol.md,
 * config); elsewhere the values are the original `config.json`'s, made safe (no
 * SVG/HTML/XML/SWF in any allow-list).
 */
// Every format the image pipeline (images/sharp.ts) checks and re-encodes. No `.bmp`: the
// pipeline cannot decode it, so its bytes would be stored as sent (an HTML page or a ZIP can
// ride in a BMP).
const IMAGE_EXTS = ['.png', '.jpg', '.jpeg', '.gif', '.webp', '.avif']
const VIDEO_EXTS = [
  '.mp4',
  '.m4v',
  '.mov',
  '.webm',
  '.mkv',
  '.ogv',
  '.avi',
  '.flv',
  '.wmv',
  '.mpeg',
  '.mpg',
]
const AUDIO_EXTS = ['.mp3', '.wav', '.m4a', '.aac', '.ogg', '.oga', '.flac']
const DOCUMENT_EXTS = [
  '.pdf',
  '.txt',
  '.md',
  '.csv',
  '.doc',
  '.docx',
  '.xls',
  '.xlsx',
  '.ppt',
  '.pptx',
  '.zip',
  '.rar',
  '.7z',
  '.gz',
  '.tar',
]
const FILE_EXTS = [...IMAGE_EXTS, ...VIDEO_EXTS, ...AUDIO_EXTS, ...DOCUMENT_EXTS]

export const EDITOR_DEFAULTS = {
  imageActionName: 'image',
  imageFieldName: 'upfile',
  imageMaxSize: 2048000,
  imageAllowFiles: IMAGE_EXTS,
  imageCompressEnable: true,
  imageCompressBorder: 1600,
  imageInsertAlign: 'none',
  imageUrlPrefix: '',
  imagePathFormat: 'image/{yyyy}{mm}{dd}/{time}{rand:24}',

  scrawlActionName: 'scrawl',
  scrawlFieldName: 'upfile',
  scrawlMaxSize: 2048000,
  scrawlUrlPrefix: '',
  scrawlInsertAlign: 'none',
  scrawlPathFormat: 'scrawl/{yyyy}{mm}{dd}/{time}{rand:24}',

  snapscreenActionName: 'snap',
  snapscreenUrlPrefix: '',
  snapscreenInsertAlign: 'none',
  snapscreenPathFormat: 'snapscreen/{yyyy}{mm}{dd}/{time}{rand:24}',

  catcherActionName: 'catch',
  catcherFieldName: 'source',
  catcherLocalDomain: ['127.0.0.1', 'localhost'],
  catcherUrlPrefix: '',
  catcherMaxSize: 2048000,
  catcherAllowFiles: IMAGE_EXTS,
  catcherPathFormat: 'catch/{yyyy}{mm}{dd}/{time}{rand:24}',

  videoActionName: 'video',
  videoFieldName: 'file',
  videoUrlPrefix: '',
  videoMaxSize: 102400000,
  videoAllowFiles: VIDEO_EXTS,
  videoPathFormat: 'video/{yyyy}{mm}{dd}/{time}{rand:24}',

  audioActionName: 'audio',
  audioFieldName: 'file',
  audioUrlPrefix: '',
  audioMaxSize: 51200000,
  audioAllowFiles: AUDIO_EXTS,
  audioPathFormat: 'audio/{yyyy}{mm}{dd}/{time}{rand:24}',

  fileActionName: 'file',
  fileFieldName: 'file',
  fileUrlPrefix: '',
  fileMaxSize: 51200000,
  fileAllowFiles: FILE_EXTS,
  filePathFormat: 'file/{yyyy}{mm}{dd}/{time}{rand:24}',

  // Word documents imported as HTML (docs/word.md); `.doc` only where LibreOffice is found.
  wordImportActionName: 'wordimport',
  wordImportFieldName: 'upfile',
  wordImportMaxSize: 20480000,
  wordImportAllowFiles: ['.docx', '.doc'] as ('.docx' | '.doc')[],

  imageManagerActionName: 'listImage',
  imageManagerListSize: 20,
  imageManagerUrlPrefix: '',
  imageManagerInsertAlign: 'none',
  // `.bmp` files stored before BMP uploads were refused are still listed.
  imageManagerAllowFiles: [...IMAGE_EXTS, '.bmp'],

  fileManagerActionName: 'listFile',
  fileManagerUrlPrefix: '',
  fileManagerListSize: 20,
  fileManagerAllowFiles: FILE_EXTS,

  toolbarShows: {},
  shortcutMenuShows: {},
}

/** Backend-only keys: validated and used by the server, never sent to the browser. */
export const SERVER_ONLY_EDITOR_KEYS = [
  'imagePathFormat',
  'scrawlPathFormat',
  'snapscreenPathFormat',
  'catcherPathFormat',
  'videoPathFormat',
  'audioPathFormat',
  'filePathFormat',
] as const

/**
 * UEditor looks an action name up as an editor option first (`getOpt(name) || name`), so an
 * action named like an option would be silently replaced in the browser (docs/protocol.md,
 * "Action names must not be editor option names").
 */
export const EDITOR_OPTION_NAMES = new Set([
  'UEDITOR_HOME_URL',
  'serverUrl',
  'serverHeaders',
  'serverparam',
  'toolbars',
  'lang',
  'langPath',
  'theme',
  'themePath',
  'zIndex',
  'charset',
  'imageUrl',
  'fontsize',
  'fontfamily',
  'paragraph',
  'rowspacingtop',
  'rowspacingbottom',
  'lineheight',
  'customstyle',
  'insertorderedlist',
  'insertunorderedlist',
  'initialContent',
  'initialStyle',
  'initialFrameWidth',
  'initialFrameHeight',
  'autoHeightEnabled',
  'autoFloatEnabled',
  'focus',
  'readonly',
  'textarea',
  'wordCount',
  'maximumWords',
  'elementPathEnabled',
  'scaleEnabled',
  'sourceEditor',
  'autotypeset',
  'allHtmlEnabled',
  'enableAutoSave',
  'saveInterval',
  'imagePopup',
  'pasteplain',
  'shortcutMenu',
  'contextMenu',
  'emotionLocalization',
  'catchRemoteImageEnable',
  'loadConfigFromServer',
])
