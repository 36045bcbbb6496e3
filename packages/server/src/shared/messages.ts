import type { UeErrorCode } from './errors.js'

export type Locale = 'zh-CN' | 'en'

/** What the editor shows the user for each code: it displays a non-SUCCESS `state` verbatim. */
export const MESSAGES: Record<Locale, Record<UeErrorCode, string>> = {
  'zh-CN': {
    UE_ACTION_UNKNOWN: '请求地址出错',
    UE_METHOD_NOT_ALLOWED: '请求方法不被支持',
    UE_FILE_MISSING: '找不到上传文件',
    UE_FILE_TOO_LARGE: '文件大小超出网站限制',
    UE_FILE_EMPTY: '上传文件为空',
    UE_TYPE_NOT_ALLOWED: '文件类型不允许',
    UE_CONTENT_MISMATCH: '文件内容与类型不符',
    UE_TOO_MANY_FILES: '一次只能上传一个文件',
    UE_BODY_INVALID: '解析上传表单错误',
    UE_BODY_TOO_LARGE: '请求数据过大',
    UE_BODY_ENCODING: '不支持的请求编码',
    UE_BODY_CONSUMED: '请求体已被其他中间件读取',
    UE_KEY_INVALID: '文件保存路径不合法',
    UE_REMOTE_URL_INVALID: '链接不是http链接',
    UE_REMOTE_FORBIDDEN: '抓取远程图片失败',
    UE_REMOTE_FAILED: '抓取远程图片失败',
    UE_REMOTE_NOT_IMAGE: '链接contentType不正确',
    UE_STORAGE_FAILED: '文件保存时出错',
    UE_INDEX_FAILED: '文件索引写入失败',
    UE_UNAUTHORIZED: '未授权',
    UE_FORBIDDEN: '权限不足',
    UE_NOT_FOUND: '文件不存在',
    UE_CALLBACK_INVALID: 'callback参数不合法',
    UE_CONFIG_INVALID: '配置文件初始化失败',
    UE_SHUTTING_DOWN: '服务器正在关闭，请稍后重试',
    UE_INTERNAL: '未知错误',
  },
  en: {
    UE_ACTION_UNKNOWN: 'Unknown action',
    UE_METHOD_NOT_ALLOWED: 'Method not allowed for this action',
    UE_FILE_MISSING: 'No uploaded file was found',
    UE_FILE_TOO_LARGE: 'The file exceeds the size limit',
    UE_FILE_EMPTY: 'The uploaded file is empty',
    UE_TYPE_NOT_ALLOWED: 'This file type is not allowed',
    UE_CONTENT_MISMATCH: 'The file content does not match its type',
    UE_TOO_MANY_FILES: 'Only one file may be uploaded per request',
    UE_BODY_INVALID: 'The request body could not be parsed',
    UE_BODY_TOO_LARGE: 'The request body is too large',
    UE_BODY_ENCODING: 'Unsupported request encoding',
    UE_BODY_CONSUMED: 'The request body was already consumed by another middleware',
    UE_KEY_INVALID: 'The storage path is invalid',
    UE_REMOTE_URL_INVALID: 'The link is not an http(s) link',
    UE_REMOTE_FORBIDDEN: 'Could not fetch the remote image',
    UE_REMOTE_FAILED: 'Could not fetch the remote image',
    UE_REMOTE_NOT_IMAGE: 'The link is not an allowed image',
    UE_STORAGE_FAILED: 'The file could not be saved',
    UE_INDEX_FAILED: 'The file index could not be updated',
    UE_UNAUTHORIZED: 'Unauthorized',
    UE_FORBIDDEN: 'Forbidden',
    UE_NOT_FOUND: 'Not found',
    UE_CALLBACK_INVALID: 'Invalid callback parameter',
    UE_CONFIG_INVALID: 'The server configuration is invalid',
    UE_SHUTTING_DOWN: 'The server is shutting down, please retry',
    UE_INTERNAL: 'Unknown error',
  },
}

export function messageFor(locale: Locale, code: UeErrorCode): string {
  return MESSAGES[locale][code]
}
